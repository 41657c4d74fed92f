"""What a researcher who studies estimation bias meets on the way: Theorem 1's closed forms
against simulation, the N of zero bias, a G of one's own (a soft-min, a weighted double) put
through the same bias machinery, and the figures of it. Expected values come from the
paper's formulas or from independent computations (quadrature, NumPy by hand), never from
the code under test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from user_modules import user_module

from maxminq import theory
from maxminq.cli import main


def test_operator_expected_bias_names_a_parameter_array_not_a_batch_shape() -> None:
    """``operator_expected_bias("weighted_double_q", 8, 2, c=[1, 2])`` said ``c must be a
    number or broadcast to the batch shape (1,), got shape (2,)``: the operator's check on
    a batch of one that the caller never gave, while ``operator_bias`` said what is wrong.
    Both now say c must be one number (they share one check)."""
    for call in (
        lambda: theory.operator_expected_bias("weighted_double_q", 8, 2, c=[1.0, 2.0]),
        lambda: theory.operator_bias(
            "weighted_double_q", 8, 2, 1.0, 1.0, 10, np.random.default_rng(0), c=[1.0, 2.0]
        ),
    ):
        with pytest.raises(ValueError) as err:
            call()
        text = str(err.value)
        assert "c must be one number here" in text and "(2,)" in text
        assert "batch shape" not in text


def _operator_rows(name: str, ns: list[int], bias: list[float]) -> list[dict[str, object]]:
    """Rows of an ``operator_bias_table`` for one operator setting (values made up: the
    figure is what is tested)."""
    return [
        {"operator": name, "M": 8, "N": n, "expected_bias": np.nan, "bias": b,
         "bias_se": 0.01, "variance": 0.04, "variance_se": 0.001, "samples": 100,
         "noise": "uniform"}
        for n, b in zip(ns, bias, strict=True)
    ]  # fmt: skip


def test_two_settings_of_one_own_g_get_two_colours() -> None:
    """A sweep of a soft-min's temperature in one figure: ``operator_bias_table(...,
    extra=[(ref, g, {"beta": 5}), (ref, g, {"beta": 20})])`` drew both curves in one colour
    (the colour went by the G's name, not its setting), told apart only by the legend."""
    from maxminq.analysis.theory_plots import plot_operator_bias

    rows = _operator_rows("maxmin", [1, 2, 3], [0.78, 0.40, 0.13])
    rows += _operator_rows("my_ops:softmin_q:beta=5", [1, 2, 3], [0.78, 0.45, 0.25])
    rows += _operator_rows("my_ops:softmin_q:beta=20", [1, 2, 3], [0.78, 0.42, 0.17])
    fig = plot_operator_bias(pd.DataFrame(rows))
    ax_bias = fig.axes[0]
    colours = {c.get_label(): c.lines[0].get_color() for c in ax_bias.containers}
    five = next(v for k, v in colours.items() if "beta=5" in k)
    twenty = next(v for k, v in colours.items() if "beta=20" in k)
    assert five != twenty
    assert colours["Maxmin Q"] not in (five, twenty)


OWN_OPS = '''
import numpy as np


def weighted_double(q, c=1.0):
    """Zhang et al.'s Weighted Double Q of one's own: q[..., 0, :] selects (Q^U), beta from
    Q^V's spread between the chosen and the worst action; two tables and no other count."""
    u, v = q[..., 0, :], q[..., 1, :]
    best, worst = u.argmax(axis=-1)[..., None], u.argmin(axis=-1)[..., None]
    d = np.abs(np.take_along_axis(v, best, -1) - np.take_along_axis(v, worst, -1))[..., 0]
    beta = d / (c + d)
    return beta * np.take_along_axis(u, best, -1)[..., 0] + (1 - beta) * np.take_along_axis(
        v, best, -1
    )[..., 0]


def soft_min(q, beta=1.0):  # max_a of -(1/beta) log mean_i exp(-beta Q^i), shifted by the min
    m = q.min(axis=-2, keepdims=True)
    soft = m[..., 0, :] - np.log1p(np.expm1(-beta * (q - m)).mean(axis=-2)) / beta
    return soft.max(axis=-1)


def at_most_two(q):
    if q.shape[-2] > 2:
        raise ValueError("takes at most two tables")
    return q.min(axis=-2).max(axis=-1)
'''

THEORY = ["theory", "--m-max", "2", "--n-max", "3", "--samples", "3000"]
THEORY += ["--variance-samples", "10", "--mc-m", "1", "--operator-m", "4", "--no-progress"]


@pytest.fixture
def own_ops(tmp_path: Path) -> Iterator[str]:
    """The module above, importable in this process."""
    with user_module(tmp_path / "ops", "hb24_ops", OWN_OPS) as name:
        yield name


def test_theory_runs_an_own_g_of_two_tables_at_n_2(own_ops: str, tmp_path: Path) -> None:
    """A weighted double of one's own takes two tables; ``--operator`` ran every G over
    N = 1..--n-max, so it failed at N = 1 ('index 1 is out of bounds') and could not be
    drawn at all; ``module:function:N`` was refused ('takes no N here'). Now
    ``--operator hb24_ops:weighted_double:2`` runs it at N = 2, and its bias is the closed
    form of Weighted Double Q, E[beta] (M-1)/(M+1), E[beta] by quadrature here."""
    out = tmp_path / "out"
    args = [*THEORY, "--out", str(out), "--operator", f"{own_ops}:weighted_double:2"]
    assert main([*args, "--op-kwargs", '{"c": 1}']) == 0
    table = pd.read_csv(out / "operator_bias.csv")
    own = table[table["operator"] == f"{own_ops}:weighted_double:c=1"]
    assert list(own["N"]) == [2]
    u = np.linspace(0.0, 2.0, 200_001)  # |X - Y| of two U(-1, 1): density (2 - u) / 2
    e_beta = np.trapezoid(u / (1.0 + u) * (2.0 - u) / 2.0, u)
    row = own.iloc[0]
    assert abs(row["bias"] - e_beta * 3 / 5) < 4 * row["bias_se"]  # M = 4: (M-1)/(M+1)


@pytest.mark.parametrize(
    ("reference", "says"),
    [  # the N it failed at (it said shape (1, 1, 4) for any), and where N goes
        ("{m}:weighted_double", "shape (1, 1, 4): index 1 is out of bounds"),
        ("{m}:at_most_two", "shape (1, 3, 4): takes at most two tables"),
    ],
)
def test_theory_says_at_which_n_an_own_g_failed(
    own_ops: str, reference: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "new" / "out"
    assert main([*THEORY, "--out", str(out), "--operator", reference.format(m=own_ops)]) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and f"{reference.format(m=own_ops)}:N" in err
    assert "\n" not in err and not (tmp_path / "new").exists()


def test_an_own_g_at_one_n_is_drawn_as_a_level() -> None:
    """``operator_bias_table``'s ``extra`` with a member count gives one row; the figure
    draws it as the fixed-count operators are drawn (a level, ', N=2' in the legend), at its
    simulated mean, as there is no closed form (the exact-mean column is NaN)."""
    from maxminq.analysis.theory_plots import plot_operator_bias

    rows = _operator_rows("maxmin", [1, 2, 3], [0.78, 0.40, 0.13])
    rows += _operator_rows("my_ops:weighted_double:c=1", [2], [0.27])
    fig = plot_operator_bias(pd.DataFrame(rows))
    levels = {line.get_label(): line.get_ydata()[0] for line in fig.axes[0].get_lines()}
    assert levels["weighted_double [my_ops] (c=1), N=2"] == pytest.approx(0.27)


def test_the_theory_page_block_runs_and_gives_the_values_shown() -> None:
    """The Theory block of docs/operators-and-theory.md listed calls on M, N, tau, gamma,
    samples and rng it never defined: copied into a session, its first line was a
    NameError. It now sets them (M = 8, N = 4) and shows each call's value; here every
    value shown is what its line gives (to the digits shown), and Theorem 1's are checked
    by quadrature of the paper's integral, ``t_MN = int_0^1 (1 - y^N)^M dy``."""
    import re

    from scipy import integrate

    text = (Path(__file__).parents[2] / "docs" / "operators-and-theory.md").read_text()
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "zero_bias_n(M)" in b]
    namespace: dict[str, object] = {}
    shown = 0
    for line in block.splitlines():
        code, _, comment = line.partition("#")
        number = re.match(r"\s*(-?\d+\.\d+|\d+):", comment)
        if number is None or not code.strip():
            exec(line, namespace)
            continue
        value = eval(code, namespace)
        digits = number.group(1).partition(".")[2]
        assert value == pytest.approx(float(number.group(1)), abs=0.5 * 10.0 ** -len(digits)), line
        shown += 1
    assert shown >= 10
    t = integrate.quad(lambda y: (1 - y**4) ** 8, 0, 1, epsabs=1e-13)[0]
    assert t == pytest.approx(0.5288, abs=5e-5)
    assert 1 - 2 * t == pytest.approx(-0.0577, abs=5e-5)  # E[Z_MN], gamma = tau = 1
    est = namespace["est"]
    assert abs(est.bias - (1 - 2 * t)) < 4 * est.bias_se  # type: ignore[attr-defined]


def test_the_split_budget_is_simulated_as_its_closed_form_takes_it() -> None:
    """``expected_bias``, ``target_variance``, ``min_variance`` and ``choose_n`` take
    ``split=True`` (Corollary 1: a sample budget shared by the N estimators, each one's
    half-width tau sqrt(N)); their simulated twins did not (a TypeError), so comparing the
    Corollary's setting with simulation meant scaling tau by hand. Checked against the
    paper's integral by quadrature: E[Z] = sqrt(N) (1 - 2 t_MN) at tau = gamma = 1."""
    from scipy import integrate

    t = integrate.quad(lambda y: (1 - y**4) ** 8, 0, 1, epsabs=1e-13)[0]  # M = 8, N = 4
    by_hand = 2.0 * (1 - 2 * t)
    est = theory.monte_carlo_bias(8, 4, 1.0, 1.0, 40_000, np.random.default_rng(5), split=True)
    assert est.split and abs(est.bias - by_hand) < 4 * est.bias_se
    # Var[Q^min] of one action at half-width 2: 4 N tau^2 / ((N+1)^2 (N+2)), tau = 2
    assert abs(est.min_variance - 4 * 4 * 4 / (25 * 6)) < 4 * est.min_variance_se
    op = theory.operator_bias(
        "maxmin", 8, 4, 1.0, 1.0, 40_000, np.random.default_rng(6), split=True
    )
    assert op.split and abs(op.bias - by_hand) < 4 * op.bias_se


def test_a_bad_parameter_value_of_an_own_g_names_op_kwargs(
    own_ops: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--operator hb24_ops:weighted_double:2 --op-kwargs '{"c": "x"}'``: G fails on the
    string c where its default c = 1 runs; the error named --operator, the option that was
    right. It names --op-kwargs now, and nothing is written."""
    out = tmp_path / "new" / "out"
    args = [*THEORY, "--out", str(out), "--operator", f"{own_ops}:weighted_double:2"]
    assert main([*args, "--op-kwargs", '{"c": "x"}']) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("maxminq theory: error: --op-kwargs: {'c': 'x'}"), err
    assert "\n" not in err and not (tmp_path / "new").exists()


def test_choose_n_takes_its_cap_by_name_only() -> None:
    """``choose_n(100, 5)`` read 5 as tau, which does not move the least biased N (the bias
    is gamma tau (1 - 2 t_MN): its zero is tau's for every tau), and returned 7, past the
    cap the caller meant. All but M are keywords now: the slip is a TypeError; by name, the
    cap holds (the bias falls with N, so capped at 5 the least biased of 1..5 is 5)."""
    with pytest.raises(TypeError):
        theory.choose_n(100, 5)  # type: ignore[misc]
    assert theory.choose_n(100, n_max=5) == 5


def test_the_tables_name_a_seed_they_cannot_take() -> None:
    """``maxminq.theory`` and ``variance_table`` take a Generator ``rng``; ``bias_table`` and
    ``operator_bias_table`` a ``seed`` (their rows draw from child streams of it). Given the
    Generator a researcher has at hand, they failed in NumPy ('SeedSequence expects int or
    sequence of ints'), and given -1 with 'expected non-negative integer': neither named
    the argument. Both are one-line ValueErrors naming seed now, before any work."""
    from maxminq.analysis.theory_plots import bias_table, operator_bias_table

    for seed in (np.random.default_rng(0), -1):
        with pytest.raises(ValueError, match=r"^seed must be a whole number >= 0"):
            bias_table(2, 2, [2], 10, seed)
        with pytest.raises(ValueError, match=r"^seed must be a whole number >= 0"):
            operator_bias_table(2, 2, 10, seed)


def test_the_simulated_cells_of_bias_csv_have_a_figure() -> None:
    """``maxminq theory`` simulates Theorem 1 for the M of ``--mc-m`` (bias.csv's mc_bias),
    but neither of its figures drew them (the heat map is the closed form alone): comparing
    the theorem with its simulation took a plot of one's own. ``plot_bias_against_n`` draws,
    for each simulated M, the closed form as a line and the Monte Carlo as points; here the
    lines at N = 1 are Q-learning's (M-1)/(M+1) by hand and the points are the table's."""
    from maxminq.analysis.theory_plots import bias_table, plot_bias_against_n

    table = bias_table(4, 3, [1, 4], 300, 0)
    ax = plot_bias_against_n(table).axes[0]
    lines = {line.get_label(): line.get_ydata() for line in ax.get_lines()}
    assert lines["M = 1"][0] == pytest.approx(0.0) and lines["M = 4"][0] == pytest.approx(3 / 5)
    points = [np.asarray(c.lines[0].get_ydata(), dtype=float) for c in ax.containers]
    simulated = table[table["M"].isin([1, 4])].sort_values(["M", "N"])["mc_bias"].to_numpy()
    np.testing.assert_allclose(np.concatenate(points), simulated)
    with pytest.raises(ValueError, match="no simulated cells"):
        plot_bias_against_n(bias_table(2, 2, [], 10, 0))


@pytest.mark.parametrize(
    ("reference", "says"),
    [
        ("maxminq.operators:maxmin:4", "curve runs over N = 1..--n-max; give --operator maxmin"),
        ("maxminq.operators:double_q:3", "it runs at N = 2; give --operator double_q"),
    ],
)
def test_an_n_after_a_library_operator_named_by_module_is_refused_as_by_name(
    reference: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``module:function:N`` runs a G of one's own at N; a library operator named that way
    (``maxminq.operators:maxmin``) keeps its own N as ``maxmin:4`` does."""
    assert main([*THEORY, "--out", str(tmp_path / "out"), "--operator", reference]) == 2
    err = capsys.readouterr().err.strip()
    assert f"--operator: takes no N here ('{reference}'): " in err and says in err
    assert "\n" not in err


def test_theory_draws_several_operators_in_one_figure(own_ops: str, tmp_path: Path) -> None:
    """A temperature sweep of a soft-min beside a weighted double of one's own: ``--operator``
    took one operator, so one figure could hold one G at one setting. Repeated, each with
    its ``--op-kwargs`` in order, every setting gets its rows. Checked: a soft-min of one
    member is that member, so at N = 1 both are Q-learning's (M-1)/(M+1) = 3/5 (M = 4); at
    N = 3 the hotter one (beta = 50, nearer the min) lies below the cooler (beta = 1)."""
    out = tmp_path / "out"
    soft = f"{own_ops}:soft_min"
    args = [*THEORY, "--out", str(out), "--operator", soft, "--op-kwargs", '{"beta": 1}']
    args += ["--operator", soft, "--op-kwargs", '{"beta": 50}']
    args += ["--operator", f"{own_ops}:weighted_double:2", "--op-kwargs", "{}"]
    assert main(args) == 0
    table = pd.read_csv(out / "operator_bias.csv").set_index(["operator", "N"])
    cool, hot = table.loc[f"{soft}:beta=1"], table.loc[f"{soft}:beta=50"]
    assert list(cool.index) == list(hot.index) == [1, 2, 3]
    for rows in (cool, hot):
        assert abs(rows.loc[1, "bias"] - 0.6) < 4 * rows.loc[1, "bias_se"]
    gap = cool.loc[3, "bias"] - hot.loc[3, "bias"]
    assert gap > 4 * np.hypot(cool.loc[3, "bias_se"], hot.loc[3, "bias_se"])
    assert list(table.loc[f"{own_ops}:weighted_double"].index) == [2]


def test_theory_pairs_op_kwargs_with_operators_or_says_so(
    own_ops: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "new" / "out"
    args = [*THEORY, "--out", str(out), "--operator", f"{own_ops}:soft_min"]
    args += ["--op-kwargs", '{"beta": 1}', "--operator", f"{own_ops}:weighted_double:2"]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert "--op-kwargs: give one for each --operator" in err and "\n" not in err
    twice = [*THEORY, "--out", str(out), "--operator", "weighted_double_q", "--op-kwargs"]
    assert (
        main([*twice, '{"c": 10}', "--operator", "weighted_double_q", "--op-kwargs", '{"c": 10}'])
        == 2
    )
    assert "is given twice" in capsys.readouterr().err
    assert not (tmp_path / "new").exists()


def test_the_operator_figure_note_covers_no_curve() -> None:
    """The note under the bias panel ('lines: exact mean; points: ...') sat at the bottom
    right always, where Maxmin's falling tail and the curves of Gs of one's own end: in a
    soft-min sweep it was written over their last points. It goes to the corner the curves
    leave free; here no vertex of any curve lies inside its box."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from maxminq.analysis.theory_plots import plot_operator_bias

    ns = [1, 2, 3, 4, 5, 6]
    rows = _operator_rows("maxmin", ns, [0.78, 0.40, 0.13, -0.06, -0.20, -0.30])
    rows += _operator_rows("my_ops:soft_min:beta=5", ns, [0.78, 0.48, 0.28, 0.15, 0.03, -0.05])
    rows += _operator_rows("my_ops:soft_min:beta=20", ns, [0.78, 0.43, 0.18, 0.0, -0.13, -0.21])
    fig = plot_operator_bias(pd.DataFrame(rows))
    FigureCanvasAgg(fig).draw()
    ax = fig.axes[0]
    (note,) = [t for t in ax.texts if "points: Monte Carlo" in t.get_text()]
    box = note.get_window_extent()
    for line in ax.get_lines():
        xy = line.get_transform().transform(np.asarray(line.get_xydata(), dtype=float))
        inside = (
            (xy[:, 0] >= box.x0)
            & (xy[:, 0] <= box.x1)
            & (xy[:, 1] >= box.y0)
            & (xy[:, 1] <= box.y1)
        )
        assert not inside.any(), (line.get_label(), xy[inside])
