"""Deep leftovers of session 21 and a second reading of the deep Python API: a diverged seed
says whether its G or its networks went non-finite; training's test episodes act through
the checked path of ``TrainedAgent.act``; one checker of a G's contract for NumPy and torch
(``operators.check_on_zeros``)."""

from __future__ import annotations

import importlib
import re
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
import torch
from test_own_operator_deep import _small  # a tiny two-seed generalized-dqn run

from maxminq import operators
from maxminq.cli import main
from maxminq.deep import read_tables, run_training
from maxminq.deep.policy import load_agent
from maxminq.deep.train import Trainer
from maxminq.errors import UsageError

pytestmark = pytest.mark.usefixtures("torch_one_thread")

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
def own_ops(tmp_path, monkeypatch):
    """The user's module, importable for the test, forgotten after."""
    folder = tmp_path / "user"
    folder.mkdir()
    (folder / f"{MODULE}.py").write_text(SOURCE)
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, MODULE, raising=False)
    yield importlib.import_module(MODULE)
    sys.modules.pop(MODULE, None)


# --- 1. a diverged seed says whether G or the networks went non-finite ------------------------

CAUSE_OF_G = re.compile(
    rf"^G {MODULE}:inf_off_zero with \{{'scale': 2\.0\}} gave inf on finite target-net values "
    r"in \[(\S+), (\S+)\] \(its input q of shape \(16, 2, 2\)\)$"
)


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


def test_a_published_runs_table_without_causes_reads_with_empty_ones(tmp_path) -> None:
    """runs.csv of the published runs (and every run before the column) has no
    diverged_cause: read back with '' for each seed, so the column is always there."""
    out = tmp_path / "run"
    run_training(_small(agent="dqn", n=1, steps=70), out, progress=False)
    (out / "runs.csv").write_text("seed,status,diverged_step\n0,done,-1\n1,diverged,65\n")
    runs = read_tables(out)["runs"]
    assert runs.columns.tolist() == ["seed", "status", "diverged_step", "diverged_cause"]
    assert runs["diverged_cause"].tolist() == ["", ""]


# --- 2. test episodes act through act()'s checked path ----------------------------------------


def _trained(cfg, fill: float | None) -> tuple[dict[str, pd.DataFrame], Trainer]:
    """``cfg`` trained to its last step, seed position 1's online nets then set to ``fill``
    (None: left), and its test episodes played."""
    tr = Trainer(cfg)
    try:
        while tr.step < cfg.steps:
            tr.train_step()
        if fill is not None:
            tr.learner.online.flat[1:2].fill_(fill)
        tr.evaluate()
        return tr.tables(), tr
    finally:
        tr.close()


@pytest.mark.parametrize(
    "fill,cause",
    [
        (float("nan"), "networks: its networks held NaN or inf in a test episode"),
        (1e30, "networks: its action values in a test episode were inf (beyond float32)"),
    ],
)
def test_a_seed_that_cannot_act_in_its_test_episodes_is_diverged_not_scored(
    fill: float, cause: str
) -> None:
    """Its nets NaN after the last update (no later step to find them), or values beyond
    float32: np.argmax took action 0 and the test returns were recorded as the policy's;
    now the seed is recorded as diverged at the last step, with no test rows, as act()
    refuses such values. Seed 0 is tested exactly as before."""
    cfg = _small(agent="dqn", n=1, steps=100, eval_episodes=2).resolve()
    tables, _ = _trained(cfg, fill)
    plain, _ = _trained(cfg, None)
    runs = tables["runs"].set_index("seed")
    assert runs.loc[1, "status"] == "diverged" and runs.loc[1, "diverged_step"] == 100
    assert runs.loc[1, "diverged_cause"].startswith(cause)
    assert tables["tests"]["seed"].tolist() == [0, 0]
    pd.testing.assert_frame_equal(tables["tests"], plain["tests"][plain["tests"]["seed"] == 0])


def test_the_model_of_a_seed_diverged_in_its_test_episodes_refuses_to_act(tmp_path, capsys) -> None:
    """model.pt records what the test episodes found: load_agent refuses that seed."""
    cfg = _small(agent="dqn", n=1, steps=100, eval_episodes=1)
    out = tmp_path / "run"
    original = Trainer.evaluate

    def evaluate(self, progress=False):  # the last update left seed 1's nets NaN
        self.learner.online.flat[1:2].fill_(float("nan"))
        original(self, progress)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Trainer, "evaluate", evaluate)
        run_training(cfg, out, progress=False)
    agent = load_agent(out)
    assert agent.status == ["done", "diverged"]
    with pytest.raises(UsageError, match=r"^--seeds: seed 1 diverged during training"):
        agent.act(np.zeros(4, np.float32), seed=1)
    # maxminq evaluate says why it is not played (runs.csv's cause), in its one line
    assert main(["evaluate", str(out), "--episodes", "1", "--no-progress"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == (
        "1 seed of 2 diverged during training and cannot act, not played: 1 (networks: its "
        "networks held NaN or inf in a test episode (after its last update))"
    )


# --- 3. one checker of a G's contract for NumPy and torch -------------------------------------


def test_a_numpy_g_returning_whole_numbers_is_refused_as_the_deep_agents_refuse_it() -> None:
    """An action's index instead of its value: the deep agents refused it, the classic
    tools (own_operator) read it as float64 and learned from action numbers."""

    def argmax_g(q):
        return np.argmax(q.mean(axis=-2), axis=-1)

    with pytest.raises(ValueError) as err:
        operators.own_operator(argmax_g, [(2, 3, 4)], "my_ops:argmax_g")
    assert str(err.value) == (
        "operator 'my_ops:argmax_g' returned int64 values for NumPy zeros of shape (2, 3, 4); "
        "G must return the bootstrap values as floats (e.g. q.mean(axis=-2).max(axis=-1), not "
        "argmax)"
    )
    with pytest.raises(ValueError, match=r"^argmax_g returned torch\.int64 values for torch"):
        operators.check_on_zeros(
            lambda q: q.mean(dim=-2).argmax(dim=-1), "argmax_g", [(2, 3, 4)], {}, "torch"
        )


def test_a_numpy_g_returning_nothing_says_so_not_that_it_gave_nan() -> None:
    """A G that forgot its return: np.asarray(None, float64) is NaN, and the message blamed a
    NaN value."""

    def no_return(q):
        q.max()

    with pytest.raises(ValueError, match=r"^operator 'no_return' returned a value of type "):
        operators.own_operator(no_return, [(3, 2)])


def test_deep_and_classic_name_one_contract_in_the_same_words() -> None:
    """The shape and finiteness checks give one message per kind of array."""

    def nan_g(q):
        return q.sum(-1).sum(-1) + float("nan")

    for kind, zeros in (("numpy", "NumPy zeros"), ("torch", "torch zeros")):
        with pytest.raises(ValueError) as err:
            operators.check_on_zeros(nan_g, "G", [(4, 2, 3)], {}, kind)
        assert str(err.value) == (
            f"G gave nan on {zeros} of shape (4, 2, 3); G must give finite values for finite ones"
        )


# --- 4. the bias probe of generalized-dqn measures its own G -----------------------------------


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


# --- 5. the Python API's errors say what to do --------------------------------------------------


@pytest.mark.parametrize(
    "seeds,advice",
    [
        (3, ": seeds=[3] for the one seed 3, seeds=range(3) for seeds 0 to 2"),
        ("0-4", ": a list or range in Python, e.g. seeds=range(5) for the command's 0-4"),
    ],
)
def test_seeds_as_a_number_or_the_commands_text_say_what_to_write(seeds, advice) -> None:
    """Stable-Baselines3's seed=3 (which TrainConfig's TypeError turns into seeds), or the
    command's '0-4': the error said only 'expected a list of whole numbers'."""
    with pytest.raises(UsageError) as err:
        _small(seeds=seeds).resolve()
    assert str(err.value) == f"--seeds: expected a list of whole numbers, got {seeds!r}{advice}"


def test_read_tables_takes_a_str_as_its_docs_call_it_and_refuses_none_in_one_line(
    tmp_path,
) -> None:
    """docs/deep-agents.md calls read_tables("runs/maxmin"), which its hint (pathlib.Path)
    refused under mypy; None was a TypeError from pathlib."""
    import typing

    from maxminq.deep.run_folder import read_tables as read

    assert str in typing.get_args(typing.get_type_hints(read)["out_dir"])
    out = tmp_path / "run"
    run_training(_small(agent="dqn", n=1, steps=70, seeds=[0]), out, progress=False)
    assert read(str(out))["runs"]["seed"].tolist() == [0]
    with pytest.raises(UsageError, match=r"^out_dir: expected a path \(a str or pathlib\.Path\)"):
        read(None)
