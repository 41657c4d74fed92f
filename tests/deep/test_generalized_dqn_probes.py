"""generalized-dqn's G and the bias probes: a diverged seed says whether its G or its
networks went non-finite; an own G's probe is G (not the mean of the nets), Double Q's and
bias-corrected's probes use their evaluating net and correction; a G that cannot take one
probe is refused before any work."""

from __future__ import annotations

import importlib
import re
import textwrap

import numpy as np
import pandas as pd
import pytest
import torch
from generalized_runs import _small
from user_modules import user_module

from maxminq.cli import main
from maxminq.deep import read_tables, run_training
from maxminq.deep.train import Trainer
from maxminq.errors import UsageError

MODULE = "own_ops_deep22"


SOURCE = textwrap.dedent(
    """
    import torch

    def inf_off_zero(q, scale=1.0):
        # finite on the zeros it is checked on, inf wherever a target value is not 0
        v = q.mean(dim=-2).amax(dim=-1)
        return torch.where(q.abs().amax(dim=(-2, -1)) > 0, v + float("inf"), v * scale)

    def mean_g(q):
        return q.mean(dim=-2).amax(dim=-1)

    def min_g(q):
        return q.amin(dim=-2).amax(dim=-1)

    def squeezes(q):
        return q.squeeze().mean(dim=-2).amax(dim=-1)
    """
)


@pytest.fixture
def own_ops(tmp_path):
    """The user's module, importable for the test, forgotten after."""
    with user_module(tmp_path / "user", MODULE, SOURCE) as name:
        yield importlib.import_module(name)


CAUSE_OF_G = re.compile(
    rf"^G {MODULE}:inf_off_zero with \{{'scale': 2\.0\}} gave inf on finite target-net values "
    r"in \[(\S+), (\S+)\] \(its input q of shape \(16, 2, 2\)\)$"
)


def _learner(operator: str, n: int, op_kwargs: dict | None = None):
    """A two-seed generalized-dqn Learner on 4-dim observations and 2 actions."""
    from maxminq.deep.agents import Learner

    gens = [torch.Generator().manual_seed(s) for s in (5, 6)]
    return Learner(
        "generalized-dqn", n, gens, "mlp", (4,), 2, "adam", 1e-3, operator=operator,
        op_kwargs=op_kwargs, hidden=(8,),
    )  # fmt: skip


def _probe(learner) -> tuple[torch.Tensor, torch.Tensor]:
    """The estimate at two observations (one per seed) and actions (1, 0), and the target
    nets' values there, (S, N) at those actions."""
    obs = torch.randn((2, 4), generator=torch.Generator().manual_seed(1))
    action = torch.tensor([1, 0])
    q = learner.target_q(obs.unsqueeze(1))[:, 0]  # (S, N, A)
    return learner.estimate(obs, action), q[[0, 1], :, action]


def test_a_g_that_goes_non_finite_on_finite_targets_is_named_as_the_cause(
    tmp_path, own_ops, capsys
) -> None:
    """Before, runs.csv said 'diverged' at step 61 and nothing more, as for networks that
    blew up; now its cause names G, its keywords, and the range of the input it got."""
    out = tmp_path / "run"
    cfg = _small(operator=f"{MODULE}:inf_off_zero", op_kwargs={"scale": 2.0})
    runs = run_training(cfg, out, progress=False)["runs"]
    assert runs["status"].tolist() == ["diverged", "diverged"]
    assert runs["diverged_step"].tolist() == [61, 61]  # the first update (learning_starts 60)
    for cause in runs["diverged_cause"]:
        low, high = (float(x) for x in CAUSE_OF_G.match(cause).groups())
        assert low < high  # an untrained net's values: not all one number
    # one line in the CSV, read back as trained
    assert (out / "runs.csv").read_text().count("\n") == 3
    pd.testing.assert_frame_equal(read_tables(out)["runs"], runs)
    # and in the command's summary
    argv = ["train", "--env", "CartPole-v1", "--agent", "generalized-dqn", "--n", "2"]
    argv += ["--operator", f"{MODULE}:inf_off_zero", "--op-kwargs", '{"scale": 2.0}']
    argv += ["--steps", "80", "--learning-starts", "60", "--batch-size", "16", "--no-plot"]
    argv += ["--hidden", "16", "--eval-episodes", "1", "--out", str(tmp_path / "cli")]
    assert main(argv) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("seed 0:"))
    assert re.fullmatch(r"seed 0: diverged at step 61 \((G .*)\), no test", line), line
    assert CAUSE_OF_G.match(re.fullmatch(r".*\((G .*)\), no test", line).group(1))


def test_networks_that_blow_up_are_named_as_the_cause_not_g(tmp_path, own_ops) -> None:
    """Seed 1's online nets set to inf at step 100 (the usual divergence): its update's
    loss goes non-finite while G (the mean, finite on finite values) is not to blame."""
    cfg = _small(operator=f"{MODULE}:mean_g").resolve()
    tr = Trainer(cfg)
    try:
        while tr.step < 100:
            tr.train_step()
        tr.learner.online.flat[2:4].fill_(float("inf"))  # seed 1's two members
        while tr.step < cfg.steps:
            tr.train_step()
        runs = tr.tables()["runs"].set_index("seed")
    finally:
        tr.close()
    assert runs.loc[1, "status"] == "diverged" and runs.loc[1, "diverged_step"] == 101
    assert runs.loc[1, "diverged_cause"].startswith("networks: ")
    assert runs.loc[0, "diverged_cause"] == ""  # done


def test_an_own_gs_bias_probe_is_g_not_the_mean_of_the_nets(own_ops) -> None:
    """A G of one's own written as Maxmin's (min over the nets): its probes read the mean of
    the N target nets, so its measured bias was Ensemble's whatever G bootstrapped with."""
    est, qa = _probe(_learner(f"{MODULE}:min_g", 3))
    assert torch.equal(est, qa.amin(dim=1))
    assert not torch.allclose(est, qa.mean(dim=1))


def test_double_q_as_g_probes_its_evaluating_net() -> None:
    """double_q bootstraps with net 2's value of net 1's greedy action: its per-action
    estimate is net 2's (as ddqn's probe reads its evaluating net), not the mean."""
    est, qa = _probe(_learner("double_q", 2))
    assert torch.equal(est, qa[:, 1])


def test_bias_corrected_as_g_probes_with_its_correction() -> None:
    """bias_corrected subtracts sigma E[max of A N(0, 1)] (1 / sqrt(pi) for A = 2) from Q:
    its probe too."""
    est, qa = _probe(_learner("bias_corrected", 1, {"sigma": 2.0}))
    assert torch.allclose(est, qa[:, 0] - 2.0 / np.sqrt(np.pi))


def test_a_g_that_cannot_take_one_probe_is_refused_before_any_work(tmp_path, own_ops) -> None:
    """The probe calls G on one observation, (1, N, A): a G that squeezes it away is refused
    in one line before the run folder exists, not by an IndexError mid-run."""
    out = tmp_path / "run"
    with pytest.raises(UsageError) as err:
        run_training(_small(operator=f"{MODULE}:squeezes"), out, progress=False)
    assert str(err.value) == (
        f"--operator: {MODULE}:squeezes must map q of shape (B, N, A) to (B,), one value per "
        "sample: got shape () from (1, 2, 2)"
    )
    assert not out.exists()
