"""The examples' scale options: ``--quick`` sets the scale of the options not given with it
(examples/README.md), a value given alongside it is kept, never silently replaced, and bad
values are refused in one line."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from helpers import REPO

EXAMPLES = REPO / "examples"


def _example(name: str, out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``examples/<name> --out out ARGS`` (no --quick unless given) as a user runs it."""
    return subprocess.run(
        [sys.executable, str(EXAMPLES / name), "--out", str(out), *args],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=out.parent,
        env={**os.environ, "MPLBACKEND": "Agg"},
    )


def _parse(name: str, *argv: str):  # noqa: ANN202 - the example's own Namespace
    """``examples/<name>``'s ``parse_args(argv)``, the module imported under its own name (as
    its environment id expects)."""
    stem = name.removesuffix(".py")
    spec = importlib.util.spec_from_file_location(stem, EXAMPLES / name)
    assert spec is not None and spec.loader is not None
    module = sys.modules.get(stem) or importlib.util.module_from_spec(spec)
    if stem not in sys.modules:
        sys.modules[stem] = module
        spec.loader.exec_module(module)
    return module.parse_args(list(argv))


@pytest.mark.parametrize(
    ("name", "option", "value"),
    [
        ("noisy_mountain_car.py", "--runs", "0"),
        ("noisy_mountain_car.py", "--episodes", "0"),
        ("noisy_mountain_car.py", "--sigma2", "-1"),
        ("noisy_mountain_car.py", "--step-sizes", "0"),
        ("noisy_mountain_car.py", "--seed", "-1"),
        ("generalized_q_random_mdp.py", "--reward-noise", "-1"),
        ("generalized_q_random_mdp.py", "--reward-noise", "nan"),
        ("generalized_q_random_mdp.py", "--seed", "-1"),
        ("operator_bias.py", "--seed", "-1"),
    ],
)
def test_examples_refuse_bad_values_in_one_line(
    tmp_path: Path, name: str, option: str, value: str
) -> None:
    """A bad value was a library traceback (UsageError / ValueError, exit status 1) after the
    --out folder had been created; now the usage error naming the option (exit status 2)
    before anything is written."""
    out = tmp_path / "out"
    proc = _example(name, out, option, value)
    assert proc.returncode == 2, proc.stderr[-500:]
    assert option in proc.stderr.splitlines()[-1]
    assert "Traceback" not in proc.stderr
    assert not out.exists()


def test_quick_keeps_the_values_given(tmp_path: Path) -> None:
    """--quick set the scale and also threw away the values given with it: '--quick --sigma2
    10 --runs 2' ran sigma^2 = 0 and 50 with 5 runs, and said nothing. It now fills in only
    what was not given (as ``maxminq experiment --quick`` does)."""
    out = tmp_path / "mc"
    proc = _example("noisy_mountain_car.py", out, "--quick", "--sigma2", "10", "--runs", "2")
    assert proc.returncode == 0, proc.stderr[-2000:]
    raw = pd.read_csv(out / "mountain_car.csv")
    assert set(raw.sigma2) == {10.0}
    assert set(raw.run) == {0, 1}
    assert raw.episode.max() == 60  # --quick's episodes, as not given
    # One variance: nothing to compare, so no claim about which algorithm the noise hurt
    # least (it printed 'Least affected by the reward noise here: ... (x1.00)').
    assert "Least affected" not in proc.stdout and "relative to" not in proc.stdout


def test_quick_keeps_samples_and_sweeps_given(tmp_path: Path) -> None:
    """As above for operator_bias.py's --samples and generalized_q_random_mdp.py's --sweeps
    (--quick replaced them by 20,000 and 1,000)."""
    out = tmp_path / "bias"
    proc = _example("operator_bias.py", out, "--quick", "--samples", "1000", "--n-max", "2")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "1,000 draws per cell" in proc.stdout

    out = tmp_path / "mdp"
    proc = _example("generalized_q_random_mdp.py", out, "--quick", "--sweeps", "300")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert pd.read_csv(out / "errors.csv").sweep.max() == 300


def test_own_env_quick_keeps_steps_and_seeds_given() -> None:
    """'--quick --steps 5000 --seeds 3' trained 3,000 steps x 2 seeds and said nothing."""
    args = _parse("own_env_maxmin_vs_dqn.py", "--quick", "--steps", "5000", "--seeds", "3")
    assert (args.steps, args.seeds) == (5000, 3)
    args = _parse("own_env_maxmin_vs_dqn.py", "--quick", "--seeds", "1")
    assert (args.steps, args.seeds) == (3000, 1)  # --quick's steps, as not given
    args = _parse("own_env_maxmin_vs_dqn.py")
    assert (args.steps, args.seeds) == (20_000, 5)  # the defaults the docstring names
