"""``maxminq compare`` / ``plot`` labels name the optimizer's options in full (session 26,
second reading of cb95062): since --optimizer-kwargs is merged over the registry's, a MinAtar
run's saved {"alpha": 0.9} from before (torch's eps 1e-8) read as eps 0.01 beside one made now
({"alpha": 0.9, "eps": 0.01}), and two runs of one optimizer spelled otherwise ({} and torch's
own values) were labelled as if they differed."""

from __future__ import annotations

from pathlib import Path

from maxminq.analysis.runs import run_labels

MINATAR = "maxminq/MinAtar-Breakout-v0"


def _cfg(env_id: str, optimizer: str, kwargs: dict) -> dict:
    return {"env_id": env_id, "agent": "dqn", "n": 1, "lr": 1e-3, "network": "minatar_cnn",
            "optimizer": optimizer, "optimizer_kwargs": kwargs}  # fmt: skip


def test_an_old_runs_options_are_shown_as_it_trained_with_them() -> None:
    cfgs = [
        _cfg(MINATAR, "centered_rmsprop", {"alpha": 0.9}),  # saved before cb95062
        _cfg(MINATAR, "centered_rmsprop", {"alpha": 0.9, "eps": 0.01}),  # the same given now
    ]
    labels = run_labels(cfgs, [Path("old"), Path("new")])
    assert labels == [
        'DQN, optimizer_kwargs {"alpha":0.9,"eps":1e-08}',
        'DQN, optimizer_kwargs {"alpha":0.9,"eps":0.01}',
    ]


def test_one_optimizer_spelled_two_ways_is_one_setting() -> None:
    cfgs = [
        _cfg("CartPole-v1", "adam", {}),
        _cfg("CartPole-v1", "adam", {"betas": [0.9, 0.999], "eps": 1e-8}),
        _cfg("CartPole-v1", "adam", {"eps": 1e-4}),
    ]
    labels = run_labels(cfgs, [Path("a"), Path("b"), Path("c")])
    # a and b: one optimizer, told apart by folder only; c by its eps
    assert labels[0] == 'DQN, optimizer_kwargs {"betas":[0.9,0.999],"eps":1e-08}, a'
    assert labels[1] == 'DQN, optimizer_kwargs {"betas":[0.9,0.999],"eps":1e-08}, b'
    assert labels[2] == 'DQN, optimizer_kwargs {"betas":[0.9,0.999],"eps":0.0001}'
