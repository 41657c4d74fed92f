"""Session 23, a second reading of the analysis and report leftovers (helper hA2).

1. The final-performance tables' ``n`` column is named as the legends name ``n``: ``K``
   for Averaged Q (``Averaged Q (K=4)`` in the figures), ``N / K`` where both are in one
   table; one rule (``style.size_name``) for labels, tables and claims.
2. ``plot_runs`` returns the paths as before, with the figure drawn (``.figure``), shown
   as its PNG in a notebook.
3. A report's ``repr`` is one line (the dataclass printed every claim and caption).
4. The report's published section: one environment as ``maxminq compare`` tells it, its
   heading naming the keywords that make it one (not the first run's, given at defaults).
5. The Mountain Car note names runs gone non-finite in the table's order.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
from run_folders import finished_run

from maxminq.analysis import report as R
from maxminq.analysis import style
from maxminq.analysis.claims import INSUFFICIENT, SUPPORTED, Claim, Undecided
from maxminq.analysis.figures import FigureFile
from maxminq.analysis.runs import plot_runs

# --- 1. the n column as the legends name it --------------------------------------------------


def _best(algorithms: dict[str, int], key: str = "algorithm") -> pd.DataFrame:
    """Summary rows (one per algorithm, its n) as the final-performance tables take them."""
    return pd.DataFrame({
        key: list(algorithms), "n": list(algorithms.values()), "sigma2": 10.0,
        "step_size": 0.02, "env_id": "CartPole-v1", "lr": 1e-3, "runs": 3, "mean": 1.0,
        "se": 0.1, "iqm": 1.0, "iqm_low": 0.9, "iqm_high": 1.1,
    })  # fmt: skip


def test_tables_name_n_as_the_legends_do() -> None:
    """The legend says 'Averaged Q (K=4)'; the table said 'N' over its 4."""
    head, rows = R._mc_table(_best({"q_learning": 1, "averaged": 4, "maxmin": 2}))
    assert head[2] == "N / K"
    assert [(r[1], r[2]) for r in rows] == [
        ("Q-learning", "1"), ("Averaged Q", "K=4"), ("Maxmin Q", "N=2")
    ]  # fmt: skip
    head, rows = R._mc_table(_best({"q_learning": 1, "averaged": 4}))
    assert head[2] == "K" and [r[2] for r in rows] == ["1", "4"]
    head, _ = R._mc_table(_best({"q_learning": 1, "maxmin": 2}))
    assert head[2] == "N"  # as before where no K is in the table
    head, rows = R._deep_table(_best({"dqn": 1, "averaged-dqn": 3, "maxmin-dqn": 2}, "agent"))
    assert head[2] == "N / K" and [r[2] for r in rows] == ["1", "K=3", "N=2"]
    # the one rule, of the labels too: a G of one's own has N estimators
    assert [style.size_name(a) for a in ("averaged", "maxmin", "my_ops:f", "double_q")] == [
        "K", "N", "N", None
    ]  # fmt: skip
    assert style.label("my_ops:f", 3) == "f [my_ops] (N=3)"


# --- 2. plot_runs: the paths, and the figure for a notebook ----------------------------------


def test_plot_runs_returns_the_paths_with_the_figure(tmp_path: Path) -> None:
    run = finished_run(
        tmp_path / "dqn", [(0, 50, 0.5, 3), (1, 50, 0.4, 3)], steps=100,
        train={0: (90, 1.0), 1: (95, 2.0)}, tests={0: 1.0, 1: 3.0},
    )  # fmt: skip
    paths = plot_runs(run, tmp_path / "fig.png", panels="return")
    png, svg = tmp_path / "fig.png", tmp_path / "fig.svg"
    assert paths == [png.resolve(), svg.resolve()] and isinstance(paths, list)  # as before
    from matplotlib.figure import Figure

    assert isinstance(paths.figure, Figure)  # before: a plain list, no figure
    assert paths.figure.axes[0].get_lines()  # the drawn curves, not an empty figure
    shown = paths._repr_png_()  # what IPython displays for a cell ending in plot_runs(...)
    assert shown is not None and shown.startswith(b"\x89PNG") and shown == png.read_bytes()
    png.unlink()
    assert paths._repr_png_() is None  # the file gone: the paths' text instead


# --- 3. a report in one line -----------------------------------------------------------------


def test_report_repr_is_one_line() -> None:
    claims = [
        Claim("toy", "a", SUPPORTED, "numbers " * 50),
        Claim("toy", "b", INSUFFICIENT, "why " * 50, undecided=Undecided.FEW_RUNS),
        Claim("toy", "c", SUPPORTED, ""),
    ]
    figures = [FigureFile(f"f{i}", "title", "caption " * 40) for i in range(3)]
    report = R.Report(Path("out/report.html"), Path("out/report.md"), figures, claims)
    assert report.verdicts == "2 supported, 1 insufficient data"
    assert repr(report) == (
        "Report('out/report.html': 2 supported, 1 insufficient data; 3 figures)"
    )  # before: every field, each claim's evidence and each figure's caption
    assert repr(R.Report(Path("r.html"), Path("r.md"))) == "Report('r.html': no claims; 0 figures)"


# --- 4. the published section: one environment as compare tells it ---------------------------


def _run(folder: Path, env_kwargs: dict | None, agent: str = "dqn") -> Path:
    """A finished two-seed run on CartPole-v1 trained with ``env_kwargs``."""
    return finished_run(
        folder, [(0, 50, 0.5, 3), (1, 50, 0.4, 3)], steps=100,
        train={0: (90, 1.0), 1: (95, 2.0)}, tests={0: 1.0, 1: 3.0}, agent=agent,
        extra={"env_kwargs": env_kwargs},
    )  # fmt: skip


def test_published_runs_group_as_compare_tells_environments(tmp_path: Path) -> None:
    """Two runs given one keyword value as 5 and as 5.0 play one environment for compare
    (its test: 10 and 10.0 alike) and were two groups (their JSON differs)."""
    root = tmp_path / "published"
    a = _run(root / "cartpole" / "dqn", {"sutton_barto_reward": False, "x": 5})
    b = _run(root / "cartpole" / "maxmin", {"sutton_barto_reward": False, "x": 5.0}, "ddqn")
    assert R.published_runs(root).groups == [[a, b]]


def test_published_heading_names_only_keywords_not_at_their_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DQN given CartPole's default (sorted first) named its keyword over a table of runs
    the other of which gave none; a keyword not at its default is still named."""
    monkeypatch.setattr(R.F, "fig_training_runs", lambda *a, **k: None)  # the text only
    root = tmp_path / "published"
    _run(root / "cartpole" / "dqn", {"sutton_barto_reward": False})
    _run(root / "cartpole" / "ddqn", None, "ddqn")
    _run(root / "other" / "dqn", {"sutton_barto_reward": True})
    doc = R._Doc(tmp_path)
    lines = R._published_section(doc, R.published_runs(root), tmp_path, tmp_path)
    assert set(lines) == {
        "CartPole-v1: 2 runs, against DQN",  # before: 'CartPole-v1 {"sutton_barto_reward":
        'CartPole-v1 {"sutton_barto_reward": true}: 1 run',  # false}: 2 runs, against DQN'
    }


# --- 5. the Mountain Car note in the table's order -------------------------------------------


def test_mountain_car_nonfinite_runs_are_named_in_the_tables_order() -> None:
    """The table lists sigma^2 = 10 (Q-learning, Averaged Q), then sigma^2 = 50; the note
    listed Q-learning at 10 and 50 before Averaged Q at 10."""

    def rec(algorithm: str, n: int, sigma2: float) -> SimpleNamespace:
        settings = {"algorithm": algorithm, "n": n, "sigma2": sigma2, "step_size": 0.08}
        note = f"{algorithm}: 2 of 2 runs went non-finite (NaN or inf weights) by episode 5"
        return SimpleNamespace(run_id=f"{algorithm}{sigma2}", kind="mountain_car",
                               status="done", settings=settings, error=note)  # fmt: skip

    records = [rec("averaged", 2, 50.0), rec("q_learning", 1, 50.0), rec("averaged", 2, 10.0),
               rec("q_learning", 1, 10.0)]  # fmt: skip
    assert [item.split(":")[0] for item in R.mountain_car_nonfinite_items(records)] == [
        "Q-learning at σ² = 10, step size 0.08",
        "Averaged Q (K=2) at σ² = 10, step size 0.08",
        "Q-learning at σ² = 50, step size 0.08",
        "Averaged Q (K=2) at σ² = 50, step size 0.08",
    ]


# --- 6. legends write a setting with every digit it needs ------------------------------------


def test_run_labels_tell_settings_apart_by_their_digits() -> None:
    """Two gammas (and step sizes) that ':g' rounds alike were labelled alike, then told
    apart by folder only ('DQN, a'), not by what differs (style.number_text: the one form)."""
    from maxminq.analysis.runs import run_labels

    cfg = {"agent": "dqn", "n": 1, "env_id": "CartPole-v1", "seeds": [0]}
    cfgs = [{**cfg, "lr": 1e-3, "gamma": 0.12345678}, {**cfg, "lr": 1e-3, "gamma": 0.12345679}]
    assert run_labels(cfgs, [Path("a"), Path("b")]) == [
        "DQN, gamma 0.12345678", "DQN, gamma 0.12345679"
    ]  # fmt: skip
    cfgs = [{**cfg, "lr": 0.00012345678}, {**cfg, "lr": 0.00012345679}]
    assert run_labels(cfgs, [Path("a"), Path("b")]) == [
        "DQN, lr 0.00012345678", "DQN, lr 0.00012345679"
    ]  # fmt: skip
    cfgs = [{**cfg, "lr": 1e-3, "gamma": 0.9}, {**cfg, "lr": 3e-4, "gamma": -5.0}]
    assert run_labels(cfgs, [Path("a"), Path("b")]) == ["DQN, lr 0.001", "DQN, lr 0.0003"]


# --- 7. compare's defaults: the registered keywords over the constructor's ------------------


class _Chain:
    """An environment constructor of one's own (only its signature is read)."""

    def __init__(self, n: int = 5, goal: object = None, **extra: object) -> None:
        self.n = n


def test_same_environment_reads_registered_keywords_over_the_constructors(monkeypatch) -> None:
    """FrozenLake-v1 (hA's test) registers the constructor's own default, so the order of
    the two was not tested: FrozenLake8x8-v1 registers map_name '8x8' over its '4x4'. An id
    registered in this process with a class, or a functools.partial fixing a keyword, is
    read as gymnasium.make calls it; a creator taking only **kwargs tells nothing."""
    import functools

    import gymnasium as gym
    from gymnasium.envs.registration import EnvSpec

    from maxminq.analysis.compare import same_environment

    assert same_environment("FrozenLake8x8-v1", {}, {"map_name": "8x8"}) == (True, [])
    assert same_environment("FrozenLake8x8-v1", {}, {"map_name": "4x4"}) == (
        False, ['map_name "4x4" vs "8x8" (default)']
    )  # fmt: skip
    for env_id, entry, kwargs in (
        ("HA2Chain-v0", _Chain, {"n": 7}),
        ("HA2Partial-v0", functools.partial(_Chain, n=7), {}),
        ("HA2Lambda-v0", lambda **kw: _Chain(**kw), {}),
    ):
        monkeypatch.setitem(gym.registry, env_id, EnvSpec(env_id, entry, kwargs=kwargs))
    assert same_environment("HA2Chain-v0", {}, {"n": 7}) == (True, [])
    assert same_environment("HA2Chain-v0", {"n": 5}, {}) == (False, ["n 7 (default) vs 5"])
    assert same_environment("HA2Partial-v0", {"n": 7.0}, {}) == (True, [])
    assert same_environment("HA2Chain-v0", {}, {"extra": 1})[0] is None  # **extra: unknown
    assert same_environment("HA2Lambda-v0", {}, {"n": 5})[0] is None


# --- 8. compare_runs' table in a notebook ----------------------------------------------------


def test_compare_runs_table_shows_all_its_columns_in_a_notebook(tmp_path: Path) -> None:
    """pandas shows 20 columns in a notebook: of compare_runs' 25 it hid score, mean, se,
    iqm and iqm_low, the numbers asked for."""
    from maxminq.analysis import compare_runs

    a, b = _run(tmp_path / "dqn", None), _run(tmp_path / "ddqn", None, "ddqn")
    table = compare_runs([a, b])
    assert isinstance(table, pd.DataFrame) and len(table.columns) > 20
    with pd.option_context("display.max_columns", 20):  # a notebook's default
        html = table._repr_html_()
    assert html is not None
    assert all(f"<th>{c}</th>" in html for c in ("score", "mean", "se", "iqm", "iqm_low"))
    assert type(table[["run", "mean"]]) is pd.DataFrame  # what is made of it: plain
