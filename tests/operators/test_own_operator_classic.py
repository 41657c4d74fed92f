"""A G function of one's own ('module:function') in the classic experiments (toy MDP, noisy
Mountain Car) and their sweep configs: it runs on the lockstep NumPy path with N estimator
tables (one, or Algorithm 1's subset, trained per update; behaviour eps-greedy on their mean).

The hand-written G functions below are compared with the library's compiled kernels (the
fast path) and with the independent single-run reference loop of tests/reference_loops.py.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import reference_loops
from user_modules import user_module

from maxminq.cli import main
from maxminq.errors import UsageError
from maxminq.linear.mountain_car import run_mountain_car_grid
from maxminq.tabular import agent
from maxminq.tabular.toy_mdp import run_toy_mdp

MODULE = "own_ops_classic21"


OWN_OPS = textwrap.dedent(
    """
    import numpy as np


    def maxmin_by_hand(q):
        # max over actions of the min over estimators, written out (not operators.maxmin)
        q = np.asarray(q)
        low = q[..., 0, :]
        for m in range(1, q.shape[-2]):
            low = np.minimum(low, q[..., m, :])
        return low.max(axis=-1)


    def ensemble_by_hand(q):
        # max over actions of the mean over estimators, summed in member order
        q = np.asarray(q)
        total = q[..., 0, :] + 0.0
        for m in range(1, q.shape[-2]):
            total = total + q[..., m, :]
        return (total / q.shape[-2]).max(axis=-1)


    def shifted(q, shift):
        return np.asarray(q).min(axis=-2).max(axis=-1) + shift


    def every_axis(q):
        return np.max(q)  # reduces every axis: not a G


    NOT_CALLABLE = 3
    """
)


@pytest.fixture
def own_ops(tmp_path: Path) -> Iterator[str]:
    """The module above, importable in this process and in spawned workers."""
    with user_module(tmp_path / "ops", MODULE, OWN_OPS, workers=True) as name:
        yield name


TOY_KW = {"mu": -0.1, "n": 3, "runs": 3, "episodes": 30, "seed": 9, "batch_size": 5,
          "update_every": 2}  # fmt: skip


MC_KW = {"n": 3, "sigma2": [1.0], "step_sizes": [0.08], "runs": 2, "episodes": 3, "seed": 5,
         "max_steps": 1000, "return_weights": True}  # fmt: skip


TOY = ["experiment", "toy-mdp", "--runs", "2", "--episodes", "4", "--mu", "0.1",
       "--workers", "1", "--no-progress"]  # fmt: skip


CONFIG = """
name: own_g
kind: toy_mdp
fixed: {{seed: 3, episodes: 4, runs: 2, mu: 0.1}}
variants:
  - {{algorithm: q_learning, n: 1}}
  - {{algorithm: "{m}:maxmin_by_hand", n: 3}}
  - {{algorithm: "{m}:shifted", n: 2, op_kwargs: {{shift: 0.25}}}}
scales: {{quick: {{}}, paper: {{}}}}
"""


@pytest.mark.parametrize("members", [1, 2])
def test_own_ensemble_equals_the_compiled_ensemble(own_ops: str, members: int) -> None:
    # Same tables, same behaviour (the mean over estimators, the documented choice for a G of
    # one's own, is Ensemble's): the lockstep NumPy path with the user's G gives the compiled
    # kernel's runs bit for bit, with Algorithm 1's subset of 2 members too.
    kw = {**TOY_KW, "update_members": members}
    library = run_toy_mdp(algorithm="ensemble", **kw)
    own = run_toy_mdp(algorithm=f"{own_ops}:ensemble_by_hand", **kw)
    for column in ("p_left", "distance", "q_a_left"):
        np.testing.assert_array_equal(own[column].to_numpy(), library[column].to_numpy())
    assert own.attrs["agent_steps"] == library.attrs["agent_steps"]
    assert set(own.algorithm) == {f"{own_ops}:ensemble_by_hand"}
    mc = {**MC_KW, "update_members": members}
    lib_df, lib_w, _ = run_mountain_car_grid(algorithm="ensemble", **mc)
    own_df, own_w, _ = run_mountain_car_grid(algorithm=f"{own_ops}:ensemble_by_hand", **mc)
    assert own_df.steps.tolist() == lib_df.steps.tolist()
    assert min(lib_df.steps) < 1000  # some episodes reach the goal: steps tell runs apart
    np.testing.assert_array_equal(own_w, lib_w)


def test_own_maxmin_with_maxmins_behaviour_equals_the_compiled_maxmin(
    own_ops: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The fast (compiled) and lockstep paths agree for Maxmin: with the behaviour switched
    # to Maxmin's (eps-greedy on min_i Q^i), a hand-written Maxmin G gives maxmin's runs.
    own_spec = agent.algorithm_spec

    def min_behaviour(name: str) -> agent.AlgorithmSpec:
        spec = own_spec(name)
        if agent.is_own_operator(name):
            return agent.AlgorithmSpec(name, spec.kind, agent.BEHAVE_MIN, spec.fixed_n)
        return spec

    monkeypatch.setattr(agent, "algorithm_spec", min_behaviour)
    library = run_toy_mdp(algorithm="maxmin", update_members=2, **TOY_KW)
    own = run_toy_mdp(algorithm=f"{own_ops}:maxmin_by_hand", update_members=2, **TOY_KW)
    for column in ("distance", "q_a_left"):
        np.testing.assert_array_equal(own[column].to_numpy(), library[column].to_numpy())
    lib_df, lib_w, _ = run_mountain_car_grid(algorithm="maxmin", **MC_KW)
    own_df, own_w, _ = run_mountain_car_grid(algorithm=f"{own_ops}:maxmin_by_hand", **MC_KW)
    assert own_df.steps.tolist() == lib_df.steps.tolist()
    np.testing.assert_array_equal(own_w, lib_w)


def test_own_maxmin_equals_the_reference_loop_with_mean_behaviour(
    own_ops: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As documented: Maxmin's targets, behaviour on the mean over estimators. The reference
    # loop (plain Python, one run) is given exactly that.
    class MaxminTargetsMeanBehaviour(reference_loops.Tables):
        def behaviour(self, value_of):  # type: ignore[no-untyped-def]
            per = [value_of(t) for t in self.tables]
            return [sum(col) / len(col) for col in zip(*per, strict=True)]

    monkeypatch.setattr(reference_loops, "Tables", MaxminTargetsMeanBehaviour)
    kw = {k: v for k, v in TOY_KW.items() if k not in ("runs",)}
    own = run_toy_mdp(algorithm=f"{own_ops}:maxmin_by_hand", runs=2, **kw)
    for run in range(2):
        p_left, q_left = reference_loops.toy_reference(algorithm="maxmin", run=run, **kw)
        mine = own[own.run == run]
        assert mine.p_left.tolist() == p_left
        assert mine.q_a_left.tolist() == q_left
    library = run_toy_mdp(algorithm="maxmin", runs=2, **kw)  # min behaviour: other runs
    assert not np.array_equal(library.q_a_left.to_numpy(), own.q_a_left.to_numpy())


def test_parameters_of_ones_own_reach_the_operator(own_ops: str) -> None:
    kw = {**TOY_KW, "runs": 2}
    plain = run_toy_mdp(algorithm=f"{own_ops}:maxmin_by_hand", **kw)
    zero = run_toy_mdp(algorithm=f"{own_ops}:shifted", op_kwargs={"shift": 0.0}, **kw)
    np.testing.assert_array_equal(zero.q_a_left.to_numpy(), plain.q_a_left.to_numpy())
    up = run_toy_mdp(algorithm=f"{own_ops}:shifted", op_kwargs={"shift": 0.5}, **kw)
    assert (up.q_a_left.to_numpy()[-2:] > plain.q_a_left.to_numpy()[-2:]).all()


def test_parse_algorithm_reads_module_function_then_n_and_parameters(own_ops: str) -> None:
    ref = f"{own_ops}:shifted"
    assert agent.parse_algorithm(f"{ref}:4:shift=0.5", {}) == [(ref, 4, {"shift": 0.5})]
    assert agent.parse_algorithm(f"{ref}:shift=1", {}) == [(ref, 2, {"shift": 1.0})]
    assert agent.parse_algorithm(f"{own_ops}:maxmin_by_hand", {}) == [
        (f"{own_ops}:maxmin_by_hand", 2, {})
    ]
    assert agent.parse_algorithm("maxmin:4", {}) == [("maxmin", 4, {})]  # unchanged
    with pytest.raises(UsageError, match=r"^--algorithms: unknown algorithm 'maxmni'"):
        agent.parse_algorithm("maxmni:4", {})


@pytest.mark.parametrize(
    ("function", "says"),
    [
        ("nowhere_module_21:g", "cannot import 'nowhere_module_21'"),
        ("{m}:missing", "has no 'missing'"),
        ("{m}:NOT_CALLABLE", "not a G function"),
        ("{m}:every_axis:3", "must map q of shape (..., N, A) to (...)"),
        ("{m}:shifted:3", "TypeError"),  # its required shift not given
        ("{m}:shifted:3:scale=2", "scale"),  # a parameter it does not take
    ],
)
def test_bad_references_are_one_line_naming_algorithms_before_any_csv(
    own_ops: str, function: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert main([*TOY, "--algorithms", function.format(m=own_ops), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith("maxminq experiment: error: --algorithms: "), err
    assert says in err
    if ":" in function and "nowhere" not in function:  # named as given, not by __name__
        assert f"operator '{own_ops}:" in err
    assert not out.exists()


def test_the_cli_runs_a_g_of_ones_own_and_names_it(own_ops: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    ref = f"{own_ops}:maxmin_by_hand"
    argv = [*TOY, "--algorithms", f"{ref}:3", "q_learning", "--out", str(out)]
    assert main(argv) == 0
    df = pd.read_csv(out / "toy_mdp.csv")
    assert set(df.algorithm) == {ref, "q_learning"}
    assert set(df[df.algorithm == ref].n) == {3}
    direct = run_toy_mdp(mu=0.1, algorithm=ref, n=3, runs=2, episodes=4, seed=0)
    got = df[df.algorithm == ref].q_a_left.to_numpy()
    np.testing.assert_allclose(got, direct.q_a_left.to_numpy(), rtol=1e-6)  # float32 CSV
    assert (out / "fig2_toy_mdp_distance.png").stat().st_size > 0


def test_labels_of_ones_own_g_are_readable() -> None:
    from maxminq.analysis import style

    assert style.label("my_ops:median_q", 4) == "median_q [my_ops] (N=4)"
    assert style.label("maxmin", 4) == "Maxmin Q (N=4)"
    assert style.color("my_ops:median_q") in style.OWN_COLORS
    # the same colour in every process (a sweep's report and a later plot): not Python's
    # hash(), which PYTHONHASHSEED changes from run to run
    import os
    import subprocess
    import sys

    code = "from maxminq.analysis import style; print(style.color('my_ops:median_q'))"
    seen = {
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout.strip()
        for seed in ("1", "2")
    }  # fmt: skip
    assert seen == {style.color("my_ops:median_q")}


def test_a_sweep_config_runs_stores_and_resumes_a_g_of_ones_own(
    own_ops: str, tmp_path: Path
) -> None:
    from maxminq.experiments.config import load_config
    from maxminq.experiments.runner import run_sweep
    from maxminq.experiments.store import load_results

    path = tmp_path / "own.yaml"
    path.write_text(CONFIG.format(m=own_ops))
    runs = load_config(path, "quick").runs
    ids = [r.run_id for r in runs]
    assert ids == [r.run_id for r in load_config(path, "quick").runs]  # stable
    out = tmp_path / "out"
    summary = run_sweep(path, out, workers=1, progress=False)
    assert summary.ok and summary.done == summary.total == 3
    table = load_results(out)["toy_mdp"]
    ref = f"{own_ops}:maxmin_by_hand"
    assert set(table.algorithm) == {"q_learning", ref, f"{own_ops}:shifted"}
    stored = table[table.algorithm == ref].sort_values(["run", "episode"])
    settings = next(r.settings for r in runs if r.settings["algorithm"] == ref)
    direct = run_toy_mdp(**settings)
    np.testing.assert_array_equal(stored.q_a_left.to_numpy(), direct.q_a_left.to_numpy())
    again = run_sweep(path, out, workers=1, progress=False)
    assert (again.skipped, again.done) == (3, 0)


def test_a_config_naming_a_missing_function_fails_before_any_work(
    own_ops: str, tmp_path: Path
) -> None:
    from maxminq.errors import MaxminqError
    from maxminq.experiments.config import load_config

    path = tmp_path / "bad.yaml"
    path.write_text(CONFIG.format(m=own_ops).replace("maxmin_by_hand", "nope"))
    with pytest.raises(MaxminqError, match=r"algorithm.*has no 'nope'"):
        load_config(path, "quick")


def test_a_missing_parameter_carries_the_configs_wording_and_pickles() -> None:
    # The config's wording is a field of the error (no regex rewriting the command line's
    # syntax); the command line's message is unchanged; a worker can send it back whole.
    import pickle

    with pytest.raises(agent.ConfigWordedError) as info:
        agent.check_op_kwargs("bias_corrected", None)
    err = info.value
    assert str(err) == (
        "--op-kwargs: bias_corrected needs sigma (e.g. bias_corrected:sigma=1; config: "
        "op_kwargs: {sigma: 1}); with sigma = 0 it is q_learning"
    )
    assert err.config_message == (
        "bias_corrected needs sigma (e.g. op_kwargs: {sigma: 1}); with sigma = 0 it is q_learning"
    )
    back = pickle.loads(pickle.dumps(err))
    assert (str(back), back.config_message) == (str(err), err.config_message)


def test_a_g_given_as_a_function_is_run_by_its_name(own_ops: str) -> None:
    # As theory.operator_bias and FiniteMDP.learn take it: the function itself. The library's
    # own is its name (the compiled kernel); one of your own its 'module:function'.
    import importlib

    from maxminq import operators

    kw = {**TOY_KW, "runs": 2}
    g = importlib.import_module(own_ops).maxmin_by_hand
    by_function = run_toy_mdp(algorithm=g, **kw)
    by_name = run_toy_mdp(algorithm=f"{own_ops}:maxmin_by_hand", **kw)
    pd.testing.assert_frame_equal(by_function, by_name)
    library = run_toy_mdp(algorithm=operators.maxmin, **kw)
    pd.testing.assert_frame_equal(library, run_toy_mdp(algorithm="maxmin", **kw))
    with pytest.raises(UsageError, match=r"^algorithm: G function '.*<lambda>' cannot be named"):
        run_mountain_car_grid(algorithm=lambda q: q.max(axis=(-2, -1)), **MC_KW)
