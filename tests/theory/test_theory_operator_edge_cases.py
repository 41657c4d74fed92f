"""``maxminq theory --operator`` edge cases (a library operator at its own setting, Averaged
Q, --n of a fixed operator, a failure outside G), a G that overflows on random errors in
``operator_bias`` and in the Monte Carlo, and the bias figure's note with a G of one's own.
(``maxminq experiment`` with a failing G: operators/test_own_operator_cli.py.)"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import REPO
from user_modules import user_module

from maxminq.cli import main

MODULE = "hg22_ops"


OWN_OPS = textwrap.dedent(
    """
    import numpy as np


    def naive_softmin_q(q, beta=1.0):  # the soft-min as written: overflows once beta |q| > 709
        return (-np.log(np.exp(-beta * q).mean(axis=-2)) / beta).max(axis=-1)
    """
)


@pytest.fixture
def own_ops(tmp_path: Path) -> Iterator[str]:
    """The module above, importable in this process."""
    with user_module(tmp_path / "ops", MODULE, OWN_OPS) as name:
        yield name


THEORY = ["theory", "--m-max", "2", "--n-max", "2", "--samples", "50"]


THEORY += ["--variance-samples", "10", "--operator-m", "4", "--no-progress"]


def test_theory_operator_at_its_library_setting_adds_no_second_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """weighted_double_q's default c is 1, the figure's own: ``--operator weighted_double_q``
    added a second set of rows named 'weighted_double_q' (other draws, one name), which the
    figure merged into one curve."""
    out = tmp_path / "out"
    assert main([*THEORY, "--out", str(out), "--operator", "weighted_double_q"]) == 0
    table = pd.read_csv(out / "operator_bias.csv")
    assert (table["operator"] == "weighted_double_q").sum() == 1
    assert not table.duplicated(["operator", "N"]).any()
    err = capsys.readouterr().err
    assert "note: --operator weighted_double_q with these parameters is drawn already" in err


def test_theory_operator_averaged_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """averaged is an operator of the library but not a row of the figure: a KeyError
    traceback before."""
    out = tmp_path / "new" / "out"
    assert main([*THEORY, "--out", str(out), "--operator", "averaged"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("maxminq theory: error: --operator: averaged is not drawn on its own")
    assert "'ensemble'" in err and "\n" not in err
    assert not (tmp_path / "new").exists()


def test_theory_operator_with_n_names_a_fixed_operators_own_n(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """double_q runs at N = 2 only: the message said its curve ran over N = 1..--n-max."""
    out = tmp_path / "out"
    assert main([*THEORY, "--out", str(out), "--operator", "double_q:2"]) == 2
    err = capsys.readouterr().err.strip()
    assert "it runs at N = 2; give --operator double_q" in err
    assert "--n-max" not in err and not out.exists()


def test_operator_bias_refuses_a_g_that_overflows_on_the_random_errors(own_ops: str) -> None:
    """Finite on the zeros it is tried on, -inf on U(-1, 1) errors at beta = 1000: the bias
    was NaN with NumPy RuntimeWarnings only. The message is the one the docs quote."""
    from maxminq.theory import operator_bias

    g = __import__(own_ops).naive_softmin_q
    with pytest.raises(ValueError) as err:
        operator_bias(g, 8, 4, 1.0, 1.0, 1000, np.random.default_rng(0), beta=1000)
    text = str(err.value)
    assert text == (
        "operator 'naive_softmin_q' gave -inf on the random errors of N = 4 members and M = 8 "
        "actions; G must give finite values for finite ones"
    )
    page = REPO / "docs" / "operators-and-theory.md"
    quoted = " ".join(page.read_text().split())  # the docs' quote, with its lines joined
    assert text.replace("naive_softmin_q", "softmin_q") in quoted.replace("`", "")
    # a finite G at a small beta still runs (the check is not of the library's operators)
    est = operator_bias(g, 8, 4, 1.0, 1.0, 1000, np.random.default_rng(0), beta=1.0)
    assert np.isfinite(est.bias)


def test_theory_operator_overflowing_in_the_monte_carlo_writes_nothing(
    own_ops: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: exit 0 with rows of empty bias in operator_bias.csv."""
    out = tmp_path / "new" / "out"
    args = ["--operator", f"{own_ops}:naive_softmin_q", "--op-kwargs", '{"beta": 1000}']
    with np.errstate(all="ignore"):  # G's own overflow warnings
        assert main([*THEORY, "--out", str(out), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert re.match(
        rf"maxminq theory: error: --operator: operator '{own_ops}:naive_softmin_q' failed in "
        r"the Monte Carlo \(ValueError: operator 'naive_softmin_q' gave -?inf on the random "
        r"errors of N = 1 members and M = 4 actions; G must give finite values for finite "
        r"ones\); nothing was written$",
        err,
    ), err
    assert "\n" not in err and not (tmp_path / "new").exists()


@pytest.mark.parametrize(("noise", "own"), [("uniform", True), ("normal", True), ("normal", False)])
def test_operator_bias_figure_note_stays_inside_its_panel(
    own_ops: str, noise: str, own: bool
) -> None:
    """With a G of one's own the bias panel's note grew '(joined points: no closed form)' on
    its one line and ran left over the panel's y tick labels; with --noise normal ('exact
    mean for uniform errors') it did so without one too."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from maxminq.analysis.theory_plots import operator_bias_table, plot_operator_bias

    g = __import__(own_ops).naive_softmin_q
    extra = [(f"{own_ops}:naive_softmin_q", g, {"beta": 1.0})] if own else []
    table = operator_bias_table(8, 2, 20, 0, noise=noise, extra=extra)
    fig = plot_operator_bias(table)
    try:
        fig.canvas.draw()
        ax = fig.axes[0]
        notes = [t for t in ax.texts if "points: Monte Carlo" in t.get_text()]
        assert len(notes) == 1 and ("no closed form" in notes[0].get_text()) == own
        box, panel = notes[0].get_window_extent(), ax.get_window_extent()
        assert panel.x0 <= box.x0 and box.x1 <= panel.x1, (box, panel)
    finally:
        plt.close(fig)


def test_a_g_in_a_module_named_like_a_library_operator_is_drawn_as_ones_own() -> None:
    """Rows 'double_q:my_g' (a G of one's own in a module double_q.py) were read as Double Q
    added with parameters: drawn as Double Q's one horizontal line at N = 2."""
    from maxminq.analysis.theory_plots import operator_row_setting

    assert operator_row_setting("double_q:my_g") == (None, None, {})
    assert operator_row_setting("double_q:my_g:k=1") == (None, None, {})
    assert operator_row_setting("weighted_double_q:c=10") == ("weighted_double_q", 2, {})
    assert operator_row_setting("maxmin") == ("maxmin", None, {})


def test_theory_failure_outside_g_is_not_blamed_on_g(
    own_ops: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With --operator given, any exception of the every-operator table was reported as G's
    failure in the Monte Carlo; one of the library's own rows (a bug, simulated here) keeps
    its traceback."""
    from maxminq import operators

    real = operators.bootstrap

    def broken(name: object, *args: object, **kwargs: object) -> object:
        if name == "ensemble" and np.any(np.asarray(args[0]) != 0):  # its rows, not a check
            raise RuntimeError("not G's")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(operators, "bootstrap", broken)
    monkeypatch.setattr("maxminq.theory.bootstrap", broken)
    args = [*THEORY, "--out", str(tmp_path / "out"), "--operator", f"{own_ops}:naive_softmin_q"]
    with pytest.raises(RuntimeError, match="not G's"):
        main(args)
