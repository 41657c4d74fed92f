"""The deep agents' training step read against the paper and the authors' settings
(session 26): the optimizer options a run resolves to, and hand-checked updates."""

from __future__ import annotations

import pytest

from maxminq.deep.config import TrainConfig

MINATAR = "maxminq/MinAtar-Breakout-v0"


def test_optimizer_kwargs_given_in_part_keep_the_registrys_others() -> None:
    """MinAtar's centered RMSprop is alpha 0.95, eps 0.01 (MinAtar's DQN). Giving only
    alpha must keep eps 0.01, as --env-kwargs is merged over the registry's keywords: it
    resolved to {'alpha': 0.9}, i.e. torch's eps 1e-8, a denominator floor 10^6 times
    smaller, silently."""
    cfg = TrainConfig(env_id=MINATAR, optimizer_kwargs={"alpha": 0.9}).resolve()
    assert cfg.optimizer_kwargs == {"alpha": 0.9, "eps": 0.01}
    cfg = TrainConfig(env_id=MINATAR, optimizer_kwargs={"eps": 1e-5}).resolve()
    assert cfg.optimizer_kwargs == {"alpha": 0.95, "eps": 1e-5}
    # Naming its optimizer changes nothing; another optimizer starts from torch's defaults.
    cfg = TrainConfig(env_id=MINATAR, optimizer="centered_rmsprop", optimizer_kwargs={}).resolve()
    assert cfg.optimizer_kwargs == {"alpha": 0.95, "eps": 0.01}
    cfg = TrainConfig(env_id=MINATAR, optimizer="adam", optimizer_kwargs={"eps": 1e-4}).resolve()
    assert cfg.optimizer_kwargs == {"eps": 1e-4}
    cfg = TrainConfig(env_id=MINATAR, optimizer="rmsprop").resolve()
    assert cfg.optimizer_kwargs == {}


@pytest.mark.parametrize("given", [{"alpha": 0.9}, {"eps": 1e-5}])
def test_the_learner_steps_with_the_merged_options(given: dict) -> None:
    """The run's optimiser takes the resolved options: one centered RMSprop step of a
    one-parameter row, worked out by hand, with MinAtar's value for the option not given."""
    import torch

    from maxminq.deep.optim import MemberOptimizer

    cfg = TrainConfig(env_id=MINATAR, optimizer_kwargs=given).resolve()
    alpha = cfg.optimizer_kwargs["alpha"]
    eps = cfg.optimizer_kwargs["eps"]
    flat = torch.tensor([[1.0]])
    opt = MemberOptimizer(flat, cfg.optimizer, 0.1, **cfg.optimizer_kwargs)
    opt.step(None, torch.tensor([[2.0]]))
    # square_avg = (1 - alpha) g^2, grad_avg = (1 - alpha) g; step lr g / (sqrt(sq - ga^2) + eps)
    sq, ga = (1 - alpha) * 4.0, (1 - alpha) * 2.0
    expected = 1.0 - 0.1 * 2.0 / ((sq - ga * ga) ** 0.5 + eps)
    assert flat.item() == pytest.approx(expected, rel=1e-5)
    assert eps == given.get("eps", 0.01) and alpha == given.get("alpha", 0.95)
