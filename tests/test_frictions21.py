"""Frictions a user met writing one G function of their own (examples/own_operator.py) for
the classic experiments: the command line's help and errors, and the Python API's."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from maxminq.cli import main
from maxminq.errors import UsageError
from maxminq.linear.mountain_car import run_mountain_car_grid
from maxminq.tabular.toy_mdp import run_toy_mdp

MODULE = "own_ops_frictions21"
OWN_OPS = textwrap.dedent(
    """
    import numpy as np


    def mixed_q(q, lam=0.5):
        q = np.asarray(q)
        return (lam * q.min(axis=-2) + (1 - lam) * q.mean(axis=-2)).max(axis=-1)
    """
)
TOY_KW = {"mu": -0.1, "n": 2, "runs": 2, "episodes": 3, "seed": 0}
MC_KW = {"n": 2, "sigma2": [1.0], "step_sizes": [0.08], "runs": 1, "episodes": 1, "seed": 0,
         "max_steps": 50}  # fmt: skip


@pytest.fixture
def own_ops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The module above, importable in this process and in spawned workers."""
    folder = tmp_path / "ops"
    folder.mkdir()
    (folder / f"{MODULE}.py").write_text(OWN_OPS)
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setenv("PYTHONPATH", str(folder))
    monkeypatch.delitem(sys.modules, MODULE, raising=False)
    return MODULE


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


def test_the_docs_median_q_is_one_operator_for_numpy_and_torch() -> None:
    # One my_ops.py for every tool: the page's median_q gives a float64 NumPy value for NumPy
    # input and a torch tensor for torch input, the same operator at an even N (torch's
    # median(dim=) is the lower middle value there, np.median the average of the two).
    import numpy as np
    import torch
    from docs_text import section

    text = section("operators-and-theory", "An operator of your own")
    block = text.split("```python\n", 1)[1].split("```", 1)[0]
    scope: dict = {}
    exec(block.split("\nrng = ", 1)[0], scope)  # noqa: S102 (the docs' own definition)
    median_q = scope["median_q"]
    q = np.random.default_rng(0).normal(size=(6, 4, 3))  # N = 4: even
    for w in (1.0, 0.7):
        want = w * np.sort(q, axis=-2)[..., 1:3, :].mean(axis=-2) + (1 - w) * q.mean(axis=-2)
        np.testing.assert_allclose(median_q(q, w), want.max(axis=-1), rtol=0, atol=1e-12)
        got = median_q(torch.tensor(q, dtype=torch.float32), w)
        assert isinstance(got, torch.Tensor) and got.dtype == torch.float32
        np.testing.assert_allclose(got.numpy(), want.max(axis=-1), rtol=0, atol=1e-6)
    words = " ".join(text.split())
    assert "examples/own_operator.py" in words and "lower of the two middle values" in words
