"""A G function of one's own in the classic experiments' command line: library names and
references parsed, slips answered, parameters given through op_kwargs and sweep configs."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from user_modules import user_module

from maxminq.cli import main
from maxminq.errors import UsageError
from maxminq.linear.mountain_car import run_mountain_car_grid
from maxminq.tabular import agent
from maxminq.tabular import toy_mdp as toy_module
from maxminq.tabular.toy_mdp import run_toy_mdp

MODULE = "own_ops_frictions21"


OWN_OPS = textwrap.dedent(
    """
    import numpy as np


    def mixed_q(q, lam=0.5):
        q = np.asarray(q)
        return (lam * q.min(axis=-2) + (1 - lam) * q.mean(axis=-2)).max(axis=-1)


    def naive_softmin_q(q, beta=1.0):  # the soft-min as written: overflows once beta |q| > 709
        return (-np.log(np.exp(-beta * q).mean(axis=-2)) / beta).max(axis=-1)


    def breaks_on_values(q):  # passes the check on zeros, raises on the run's first values
        if np.any(q != 0):
            raise RuntimeError("cannot take these values\\nsecond line")
        return q.min(axis=-2).max(axis=-1)
    """
)


TOY_KW = {"mu": -0.1, "n": 2, "runs": 2, "episodes": 3, "seed": 0}


MC_KW = {"n": 2, "sigma2": [1.0], "step_sizes": [0.08], "runs": 1, "episodes": 1, "seed": 0,
         "max_steps": 50}  # fmt: skip


@pytest.fixture
def own_ops(tmp_path: Path) -> Iterator[str]:
    """The module above, importable in this process and in spawned workers."""
    with user_module(tmp_path / "ops", MODULE, OWN_OPS, workers=True) as name:
        yield name


G_SOURCE = textwrap.dedent(
    """
    import numpy as np


    def g(q):
        return np.asarray(q).mean(axis=-2).max(axis=-1)
    """
)


@pytest.fixture
def module_named_averaged(tmp_path: Path) -> Iterator[str]:
    """A module of the user's own that shares its name with a library operator."""
    with user_module(tmp_path / "ops", "averaged", G_SOURCE, workers=True) as name:
        yield name


KTH_SOURCE = textwrap.dedent(
    """
    import numpy as np


    def kth(q, k=0):
        # the k-th smallest estimate of each action (an index: k must be an int), max over A
        return np.sort(np.asarray(q), axis=-2)[..., k, :].max(axis=-1)
    """
)


@pytest.fixture
def kth_module(tmp_path: Path) -> Iterator[str]:
    """A G whose parameter is an index."""
    with user_module(tmp_path / "kth_ops", "kth_ops21", KTH_SOURCE, workers=True) as name:
        yield f"{name}:kth"


@pytest.mark.parametrize("sub", ["toy-mdp", "mountain-car"])
def test_algorithms_help_names_a_g_of_ones_own(
    sub: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(["experiment", sub, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "module:function[:N][:key=value" in text
    assert "PYTHONPATH" in text


def test_one_g_at_two_parameters_points_to_a_sweep_config(
    own_ops: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = f"{own_ops}:mixed_q:2:lam=0.5", f"{own_ops}:mixed_q:2:lam=1"
    out = tmp_path / "out"
    argv = ["experiment", "toy-mdp", "--algorithms", a, b, "--out", str(out)]
    assert main([*argv, "--runs", "2", "--episodes", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "is given twice" in err[0]
    assert "sweep config one variant per op_kwargs (docs/sweeps.md)" in err[0]
    assert not out.exists()


def test_a_library_operator_given_twice_keeps_its_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["experiment", "toy-mdp", "--algorithms", "maxmin:4", "maxmin:4"]
    assert main([*argv, "--out", str(tmp_path / "o")]) == 2
    assert (
        capsys.readouterr()
        .err.strip()
        .endswith("give each once (the CSV tells settings apart by algorithm and n only)")
    )


def test_a_sweep_config_tells_apart_two_variants_differing_in_op_kwargs(
    own_ops: str, tmp_path: Path
) -> None:
    # The way the error above points to: it runs both, stores both, and tells them apart.
    from maxminq.experiments.runner import run_sweep
    from maxminq.experiments.store import load_results

    path = tmp_path / "two.yaml"
    path.write_text(
        "name: two\nkind: toy_mdp\nfixed: {seed: 3, episodes: 3, runs: 2, mu: -0.1}\n"
        f'variants:\n  - {{algorithm: "{own_ops}:mixed_q", n: 2, op_kwargs: {{lam: 0.5}}}}\n'
        f'  - {{algorithm: "{own_ops}:mixed_q", n: 2, op_kwargs: {{lam: 1}}}}\n'
        "scales: {quick: {}, paper: {}}\n"
    )
    out = tmp_path / "out"
    summary = run_sweep(path, out, workers=1, progress=False)
    assert summary.ok and summary.done == summary.total == 2
    table = load_results(out)["toy_mdp"]
    assert sorted(table.op_kwargs.unique()) == ['{"lam":0.5}', '{"lam":1}']
    for text, lam in (('{"lam":0.5}', 0.5), ('{"lam":1}', 1)):
        rows = table[table.op_kwargs == text].sort_values(["run", "episode"])
        direct = run_toy_mdp(algorithm=f"{own_ops}:mixed_q", op_kwargs={"lam": lam},
                             mu=-0.1, n=2, runs=2, episodes=3, seed=3)  # fmt: skip
        assert rows.q_a_left.tolist() == direct.q_a_left.tolist()


def test_a_function_of_main_from_python_names_algorithm_not_the_cli_option() -> None:
    def g(q):  # type: ignore[no-untyped-def]
        return q.max(axis=(-2, -1))

    g.__module__ = "__main__"
    with pytest.raises(UsageError, match=r"^algorithm: G function .* cannot be named"):
        run_toy_mdp(algorithm=g, **TOY_KW)
    with pytest.raises(UsageError, match=r"^algorithm: G function .* cannot be named"):
        run_mountain_car_grid(algorithm=g, **MC_KW)


def test_a_gs_parameter_outside_op_kwargs_says_where_it_goes(own_ops: str) -> None:
    ref = f"{own_ops}:mixed_q"
    with pytest.raises(UsageError) as exc:
        run_toy_mdp(algorithm=ref, lam=0.3, **TOY_KW)
    assert str(exc.value) == (
        "toy MDP: unknown parameter(s) ['lam']; the parameters of the G function "
        f"'{ref}' go in op_kwargs={{'lam': 0.3}}"
    )
    with pytest.raises(UsageError, match=r"go in op_kwargs=\{'lam': 0.3\}$"):
        run_mountain_car_grid(algorithm=ref, lam=0.3, **MC_KW)
    # a name that is not G's parameter: the message as before
    with pytest.raises(UsageError, match=r"^toy MDP: unknown parameter\(s\) \['lamb'\]$"):
        run_toy_mdp(algorithm=ref, lamb=0.3, **TOY_KW)


def test_a_misspelt_library_name_says_which_one_was_meant() -> None:
    with pytest.raises(
        UsageError, match=r"^--algorithms: unknown algorithm 'maxmni' \(did you mean maxmin\?\)"
    ):
        agent.parse_algorithm("maxmni:4", {})
    # a sweep config's algorithm: the same check, the same hint
    with pytest.raises(UsageError, match=r"did you mean bias_corrected\?"):
        agent.resolve_algorithm("bias_correctd", 1)
    with pytest.raises(UsageError) as info:  # nothing near: the list, no guess
        agent.parse_algorithm("zzz", {})
    assert "did you mean" not in str(info.value)


def test_a_misspelt_library_name_with_a_function_part_says_which_one_was_meant(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # 'bias_correctd:x' reads as module:function; no module 'bias_correctd' imports, and its
    # name is one letter from the library's bias_corrected: say so, not only the import.
    with pytest.raises(UsageError) as info:
        agent.parse_algorithm("bias_correctd:x", {})
    text = str(info.value)
    assert text.startswith("--algorithms: operator 'bias_correctd:x': cannot import")
    assert "did you mean the library's bias_corrected" in text
    assert "\n" not in text
    out = tmp_path / "out"
    argv = ["experiment", "toy-mdp", "--algorithms", "maxmn:x:3", "--runs", "1",
            "--episodes", "1", "--workers", "1", "--no-progress", "--out", str(out)]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "did you mean the library's maxmin" in err, err
    assert not out.exists()
    with pytest.raises(UsageError) as far:  # an unrelated module name: no guess
        agent.parse_algorithm("nowhere_module_21:g", {})
    assert "did you mean" not in str(far.value)


def test_a_module_named_like_a_library_operator_runs_from_the_command_line(
    module_named_averaged: str, tmp_path: Path
) -> None:
    # A config's 'algorithm: averaged:g' is the module's g (a colon makes a reference); the
    # command line read 'averaged:g' as the library's averaged with N 'g' and refused it.
    assert agent.parse_algorithm("averaged:g:3", {}) == [("averaged:g", 3, {})]
    assert agent.parse_algorithm("averaged:g", {}) == [("averaged:g", 2, {})]
    assert agent.parse_algorithm("averaged:3", {}) == [("averaged", 3, {})]  # the library's
    df = run_toy_mdp(mu=0.1, algorithm="averaged:g", n=2, runs=1, episodes=2, seed=0)
    assert set(df.algorithm) == {"averaged:g"}


def test_a_library_name_with_a_word_for_n_still_says_what_it_expects() -> None:
    # no module 'maxmin' to import: the library's maxmin with a bad N, as before
    with pytest.raises(UsageError, match=r"expected name\[:N\]\[:key=value\].*'maxmin:g'"):
        agent.parse_algorithm("maxmin:g", {})


def test_library_maxmin_forced_onto_the_lockstep_path_applies_the_whole_subset(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The lockstep path's update subset (u > 1), checked against the compiled kernel with the
    # library's own Maxmin (min behaviour, operators.maxmin): no library operator reaches that
    # path with u > 1 (maxmin and ensemble take no parameters), so it is forced here.
    kw = {"mu": -0.1, "algorithm": "maxmin", "n": 4, "runs": 2, "episodes": 25, "seed": 4,
          "batch_size": 3, "update_members": 3}  # fmt: skip
    compiled = run_toy_mdp(**kw)
    monkeypatch.setattr(toy_module, "kernel_operator_code", lambda name, kwargs: -1)
    lockstep = run_toy_mdp(**kw)
    np.testing.assert_array_equal(lockstep.q_a_left.to_numpy(), compiled.q_a_left.to_numpy())
    one = run_toy_mdp(**{**kw, "update_members": 1})  # the subset changes the runs
    assert not np.array_equal(one.q_a_left.to_numpy(), lockstep.q_a_left.to_numpy())


def test_no_library_operator_reaches_the_lockstep_subset() -> None:
    # Why published runs did not change: the operators that run on the lockstep path (those
    # given parameters) update one table, so u > 1 is refused for them.
    for token in ("weighted_double_q:c=10", "bias_corrected:sigma=0.5"):
        ((name, n, kwargs),) = agent.parse_algorithm(token, {})
        assert agent.kernel_operator_code(name, kwargs) == -1
        with pytest.raises(UsageError, match=r"^--update-members: .* updates one table"):
            agent.check_update_members(name, n, 2)
    for name in ("maxmin", "ensemble"):
        assert agent.kernel_operator_code(name, {}) >= 0
        with pytest.raises(UsageError, match="takes no parameters"):
            agent.check_op_kwargs(name, {"c": 1})


def test_a_whole_number_parameter_of_ones_own_g_stays_a_whole_number(kth_module: str) -> None:
    # k=1 reached G as 1.0, and np.sort(q)[..., 1.0, :] is an IndexError: a G taking an
    # index (a count, a position) could not run at all (the deep agents pass it as given).
    assert agent.parse_algorithm(f"{kth_module}:3:k=1", {}) == [(kth_module, 3, {"k": 1})]
    ((_, _, kwargs),) = agent.parse_algorithm(f"{kth_module}:3:k=1", {})
    assert type(kwargs["k"]) is int
    with pytest.raises(UsageError, match="only integers"):  # written as a float: as written
        agent.parse_algorithm(f"{kth_module}:3:k=1.0", {})
    checked = agent.check_op_kwargs(kth_module, {"k": np.int64(2)})
    assert checked == {"k": 2} and type(checked["k"]) is int
    # the library's parameters stay floats (their compiled twins and run ids)
    assert type(agent.check_op_kwargs("weighted_double_q", {"c": 2})["c"]) is float
    kw = {"mu": -0.1, "n": 3, "runs": 2, "episodes": 12, "seed": 2, "batch_size": 3}
    second = run_toy_mdp(algorithm=kth_module, op_kwargs={"k": 1}, **kw)
    # the median of 3 is the 2nd smallest: a hand-written median G's runs, bit for bit
    (Path(sys.modules["kth_ops21"].__file__).parent / "median_ops21.py").write_text(
        "import numpy as np\n\n\ndef median(q):\n"
        "    return np.median(np.asarray(q), axis=-2).max(axis=-1)\n"
    )
    median = run_toy_mdp(algorithm="median_ops21:median", **kw)
    np.testing.assert_array_equal(second.q_a_left.to_numpy(), median.q_a_left.to_numpy())


def test_a_sweep_config_gives_ones_own_g_its_whole_number_parameter(
    kth_module: str, tmp_path: Path
) -> None:
    from maxminq.experiments.config import load_config

    path = tmp_path / "kth.yaml"
    path.write_text(
        "name: kth\nkind: toy_mdp\nfixed: {seed: 1, episodes: 2, runs: 1, mu: 0.1}\n"
        f'variants:\n  - {{algorithm: "{kth_module}", n: 3, op_kwargs: {{k: 1}}}}\n'
        "scales: {quick: {}, paper: {}}\n"
    )
    (run,) = load_config(path, "quick").runs
    assert run.settings["op_kwargs"] == {"k": 1}
    assert type(run.settings["op_kwargs"]["k"]) is int
    assert len(run_toy_mdp(**run.settings)) == 2


def test_a_configs_misspelt_library_reference_is_answered_in_the_configs_words(
    tmp_path: Path,
) -> None:
    from maxminq.errors import MaxminqError
    from maxminq.experiments.config import load_config

    path = tmp_path / "typo.yaml"
    path.write_text(
        "name: typo\nkind: toy_mdp\nfixed: {seed: 1, episodes: 2, runs: 1, mu: 0.1}\n"
        'variants:\n  - {algorithm: "bias_correctd:x", n: 1}\nscales: {quick: {}, paper: {}}\n'
    )
    with pytest.raises(MaxminqError) as info:
        load_config(path, "quick")
    text = str(info.value)
    assert "variants[0].algorithm: " in text and "cannot import 'bias_correctd'" in text
    assert "did you mean the library's bias_corrected (algorithm: bias_corrected)?" in text
    assert "[:N]" not in text  # the command line's syntax is not a config's


def test_theorem_1s_experiment_takes_a_reference_as_the_classic_experiments_do(
    kth_module: str,
) -> None:
    # docs: a G goes where an operator's name goes; the toy MDP took 'module:function' but
    # operator_bias said "operator_params: unknown operator 'kth_ops21:kth'".
    import importlib

    from maxminq.theory import operator_bias

    g = importlib.import_module("kth_ops21").kth
    by_name = operator_bias(kth_module, 8, 3, 1.0, 1.0, 2000, np.random.default_rng(5), k=0)
    by_function = operator_bias(g, 8, 3, 1.0, 1.0, 2000, np.random.default_rng(5), k=0)
    maxmin = operator_bias("maxmin", 8, 3, 1.0, 1.0, 2000, np.random.default_rng(5))
    assert by_name.bias == by_function.bias == maxmin.bias  # k=0: the min, Maxmin's G
    with pytest.raises(ValueError, match=r"^operator 'kth_ops21:nope': module 'kth_ops21' has"):
        operator_bias("kth_ops21:nope", 8, 3, 1.0, 1.0, 10, np.random.default_rng(5))


def test_update_members_refusals_name_a_g_of_ones_own_among_those_that_take_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # A G of one's own updates Algorithm 1's subset too; the refusals said "only maxmin and
    # ensemble", sending a user with such a G away from an option that works for it.
    with pytest.raises(UsageError) as info:
        agent.check_update_members("double_q", 2, 2)
    assert "maxmin, ensemble and a G of your own ('module:function')" in str(info.value)
    argv = ["experiment", "toy-mdp", "--algorithms", "double_q", "--update-members", "2",
            "--workers", "1", "--no-progress", "--out", str(tmp_path / "o")]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "maxmin, ensemble and a G of your own ('module:function')" in err, err


@pytest.mark.parametrize(
    ("source", "says"),
    [
        ("def g(q)\n    return q\n", "SyntaxError"),
        ("raise RuntimeError('needs a GPU')\n", "RuntimeError: needs a GPU"),
    ],
)
def test_a_module_that_fails_to_import_is_one_line_exit_2(
    source: str, says: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    # A slip in the user's module (a missing colon, an error at import) was a traceback and
    # exit status 1: only ImportError was caught.
    folder = tmp_path / "bad_ops"
    folder.mkdir()
    (folder / "bad_ops21.py").write_text(source)
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, "bad_ops21", raising=False)
    out = tmp_path / "out"
    argv = ["experiment", "toy-mdp", "--algorithms", "bad_ops21:g", "--runs", "1",
            "--episodes", "1", "--workers", "1", "--no-progress", "--out", str(out)]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith(
        "maxminq experiment: error: --algorithms: operator 'bad_ops21:g': importing "
        "'bad_ops21' failed: "
    ), err
    assert says in err and "bad_ops21.py" in err
    assert not out.exists()


@pytest.mark.parametrize(
    "command",
    [
        ["toy-mdp", "--runs", "2", "--episodes", "2", "--mu", "0.1"],
        ["mountain-car", "--runs", "1", "--episodes", "1", "--max-steps", "20"],
    ],
)
def test_experiment_g_failing_during_the_run_is_one_line(
    own_ops: str, command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A G of one's own passes its check on zeros, then raises on the run's values: a
    traceback through the simulation before (the RuntimeError out of main)."""
    out = tmp_path / "new" / "out"
    args = ["experiment", *command, "--algorithms", f"{own_ops}:breaks_on_values:2"]
    assert main([*args, "--workers", "1", "--no-progress", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"maxminq experiment: error: --algorithms: operator '{own_ops}:breaks_on_values' "
        "failed during the run (RuntimeError: cannot take these values); nothing was written"
    )
    assert not (tmp_path / "new").exists()


def test_experiment_failure_outside_g_is_not_blamed_on_g(
    own_ops: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only an exception raised in G's module is reported as G's failure: one from the
    simulation itself (a bug of the library, simulated here) keeps its traceback."""
    from maxminq.tabular import toy_mdp

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("not G's")

    monkeypatch.setattr(toy_mdp, "optimal_p_left", broken)
    args = ["experiment", "toy-mdp", "--runs", "2", "--episodes", "2", "--mu", "0.1"]
    args += ["--algorithms", f"{own_ops}:naive_softmin_q:2", "--workers", "1", "--no-progress"]
    with pytest.raises(RuntimeError, match="not G's"):
        main([*args, "--out", str(tmp_path / "out")])
