"""``maxminq plot`` / ``maxminq train``'s curves figure: runs without any bias measured,
panels of one run on different step ranges, runs with one metrics row, runs that differ only
in ``hidden`` or ``env_kwargs``, the ``bias_dist`` panel, many panels wrapped into rows,
the title's standard error, --out as a folder or a file, and options refused in one line."""

from __future__ import annotations

import json
import math
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from run_folders import finished_run  # noqa: E402

import maxminq.analysis as analysis
from maxminq.analysis.figures import (
    bias_quantiles,
    fig_training_runs,
    probe_intervals,
    run_title,
    training_runs_figure,
)
from maxminq.analysis.runs import run_labels, run_settings
from maxminq.cli import main  # noqa: E402
from maxminq.commands.plot import figure_title
from maxminq.deep.train import read_tables
from maxminq.errors import UsageError


def _two_runs(tmp_path: Path) -> tuple[Path, Path]:
    """A DQN and a Maxmin DQN run folder, finished, two seeds each."""
    metrics = [(s, step, 0.1 * s, 3) for s in (0, 1) for step in (1000, 2000)]
    train = {0: (2000, 1.0), 1: (2000, 2.0)}
    dqn = finished_run(tmp_path / "dqn", metrics, steps=2000, train=train, tests={0: 1, 1: 2})
    maxmin = finished_run(
        tmp_path / "maxmin",
        metrics,
        steps=2000,
        train=train,
        tests={0: 1, 1: 2},
        agent="maxmin-dqn",
    )
    return maxmin, dqn


NAN = math.nan


def _run(
    folder: Path,
    agent: str,
    episodes: list[tuple[int, float]],
    metrics: list[tuple[int, float, float]],
    steps: int,
    **settings,
) -> Path:
    """A finished one-seed run folder as 'maxminq train' writes it, with made-up numbers:
    ``episodes`` (step, return_avg100) and ``metrics`` (step, bias_mean, q_mean) rows."""
    folder.mkdir()
    cfg = {"agent": agent, "n": 2 if "maxmin" in agent else 1, "lr": 1e-3, "steps": steps}
    cfg |= {"env_id": "MountainCar-v0", "seeds": [0], "network": "mlp", **settings}
    (folder / "config.json").write_text(json.dumps(cfg))
    ep = pd.DataFrame(episodes, columns=["step", "return_avg100"])
    ep.insert(0, "seed", 0)
    ep.to_csv(folder / "episodes.csv", index=False)
    m = pd.DataFrame(metrics, columns=["step", "bias_mean", "q_mean"])
    m.insert(0, "seed", 0)
    m["bias_abs"], m["bias_std"], m["loss"] = m["bias_mean"].abs(), m["bias_mean"] * 0, 0.1
    m.to_csv(folder / "metrics.csv", index=False)
    pd.DataFrame({"seed": [0], "return": [1.0]}).to_csv(folder / "tests.csv", index=False)
    pd.DataFrame({"seed": [0], "status": ["done"]}).to_csv(folder / "runs.csv", index=False)
    return folder


def _panels(fig: plt.Figure) -> dict[str, plt.Axes]:
    return {ax.get_title(): ax for ax in fig.axes if ax.get_visible()}


def _texts(ax: plt.Axes) -> str:
    return " ".join(t.get_text() for t in ax.texts)


def _cfg(**extra) -> dict:
    return {"agent": "dqn", "n": 1, "lr": 1e-3, "env_id": "CartPole-v1", "network": "mlp"} | extra


def _probes(folder: Path, probes: list[tuple[int, int, float]], metrics: dict[int, list[int]]):
    """Give a ``_run`` folder a probes table, as ``--save-probes`` writes it, of ``probes``
    (seed, end_step, bias) rows, and metrics rows at ``metrics`` (seed: steps) for their
    seeds (bias columns made up: the bias_dist panel reads the probes)."""
    p = pd.DataFrame(probes, columns=["seed", "end_step", "bias"])
    p["episode"], p["step"], p["episode_step"] = 1, p["end_step"] - 1, 0
    p["terminated"], p["return"] = True, 0.0
    p["estimate"] = p["bias"]
    cols = ["seed", "episode", "step", "episode_step", "end_step", "terminated", "estimate"]
    p[[*cols, "return", "bias"]].to_csv(folder / "probes.csv", index=False)
    rows = [(seed, step) for seed, steps in metrics.items() for step in steps]
    m = pd.DataFrame(rows, columns=["seed", "step"])
    m["loss"], m["q_mean"], m["bias_mean"], m["bias_std"], m["bias_abs"] = 0.1, 1.0, -1, 0, 1
    m.to_csv(folder / "metrics.csv", index=False)


# Two seeds, metrics every 100 steps; seed 1 diverged after step 200 (no row for its last
# interval), seed 0 ended at 250 (a last, partial interval). A probe counts in the interval
# its episode ended in: (100, 200] holds end steps 101..200; seed 1's probe ending at 230
# has no metrics row and is not drawn (as bias_mean leaves it out).
BINNED_PROBES = [
    (0, 100, -4.0), (0, 101, 1.0), (0, 150, -2.0), (0, 200, 3.0), (0, 240, 0.5),
    (0, 250, 2.5), (1, 60, -6.0), (1, 180, 5.0), (1, 199, -1.0), (1, 230, 40.0),
]  # fmt: skip


BINNED_METRICS = {0: [100, 200, 250], 1: [100, 200]}


# By hand from the rows above: each interval's biases, both seeds pooled.
POOLED = {100: [-4.0, -6.0], 200: [1.0, -2.0, 3.0, 5.0, -1.0], 250: [0.5, 2.5]}


def _runs_of(n_runs: int) -> list[tuple[str, str, dict[str, pd.DataFrame]]]:
    """``n_runs`` runs of one seed (tables built in memory), alternating DQN and Maxmin DQN."""
    episodes = pd.DataFrame({"seed": 0, "step": [100, 200], "return_avg100": [1.0, 2.0]})
    metrics = pd.DataFrame({"seed": 0, "step": [100, 200], "bias_mean": [0.5, 0.4]})
    metrics["q_mean"], metrics["loss"] = 1.0, 0.1
    agents = ("dqn", "maxmin-dqn")
    return [
        (f"run {i}", agents[i % 2], {"episodes": episodes, "metrics": metrics})
        for i in range(n_runs)
    ]


# A phrase only the caption's sentence on each panel has (written here, not read from the code).
CAPTION_PHRASES = {
    "return": "100-episode moving average",
    "bias": "minus the discounted return obtained from there",
    "bias_abs": "|estimate - discounted return|",
    "q": "mean Q(s, a) on its replayed mini-batches",
    "loss": "mean loss of the updates",
    "eval": "eval_every_episodes",
    "bias_dist": "10-90% quantiles",
}


def test_plot_out_ending_in_a_slash_is_a_folder(tmp_path, monkeypatch, capsys) -> None:
    """``maxminq plot A B --out figs/`` wrote ``figs.png`` beside where the user asked for a
    folder (the slash was lost in a Path); now the folder is made and the figure is inside
    it under the default name, from the command and from ``plot_runs`` alike."""
    from maxminq.analysis import plot_runs

    maxmin, dqn = _two_runs(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["plot", str(maxmin), str(dqn), "--out", "figs/", "--panels", "return"]) == 0
    assert (tmp_path / "figs" / "compare.png").is_file()
    assert (tmp_path / "figs" / "compare.svg").is_file()
    assert not (tmp_path / "figs.png").exists()
    assert f"figure written to {tmp_path / 'figs' / 'compare.png'}" in capsys.readouterr().out
    paths = plot_runs([maxmin], "one/", panels="return")
    assert paths == [tmp_path / "one" / "curves.png", tmp_path / "one" / "curves.svg"]
    assert not (tmp_path / "one.png").exists()


def test_plot_out_without_slash_is_still_a_file_name(tmp_path, monkeypatch) -> None:
    """The documented reading of ``--out`` is unchanged: a path (with or without .png) that
    is not a folder names the figure."""
    maxmin, dqn = _two_runs(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["plot", str(maxmin), str(dqn), "--out", "figs", "--panels", "return"]) == 0
    assert (tmp_path / "figs.png").is_file() and not (tmp_path / "figs").exists()


@pytest.mark.parametrize(("panels", "shape"), [(4, (1, 4)), (5, (2, 3)), (6, (2, 3))])
def test_many_panels_wrap_into_rows(panels: int, shape: tuple[int, int], tmp_path) -> None:
    """``maxminq plot RUN --panels`` with six of the eight panels drew one row of six, 32
    inches wide, whose labels could not be read at any size a screen shows it; now more
    than four panels wrap into rows of three, every panel keeps its step labels, and a
    spare cell of a comparison takes the legend."""
    from maxminq.analysis.figures import training_runs_figure
    from maxminq.analysis.runs import load_runs

    maxmin, dqn = _two_runs(tmp_path)
    _, tables = load_runs([maxmin, dqn])
    names = ["return", "bias", "bias_abs", "bias_std", "q", "loss"][:panels]
    runs = [("Maxmin DQN", "maxmin-dqn", tables[0]), ("DQN", "dqn", tables[1])]
    fig = training_runs_figure(runs, "title", names)
    assert fig is not None
    shown = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in shown] == [
        "training return",
        "estimation bias (above 0: over)",
        "absolute estimation error",
        "spread of the estimation error",
        "Q estimates (updated net)",
        "training loss",
    ][:panels]
    rows = {round(ax.get_position().y0, 3) for ax in shown}
    cols = {round(ax.get_position().x0, 3) for ax in shown}
    assert (len(rows), len(cols)) == shape
    width, height = fig.get_size_inches()
    assert width == pytest.approx(4.5 * shape[1]) and height == pytest.approx(3.6 * shape[0])
    fig.canvas.draw()
    for ax in shown:  # every panel's step axis is labelled, not only the bottom row's
        assert any(t.get_text() for t in ax.get_xticklabels()), ax.get_title()
    if shape[0] * shape[1] > panels:  # the legend sits in the spare cell, not below
        (legend,) = fig.legends
        spare = next(ax for ax in fig.axes if not ax.get_visible()).get_position()
        box = legend.get_window_extent().transformed(fig.transFigure.inverted())
        assert spare.x0 <= (box.x0 + box.x1) / 2 <= spare.x1


def test_plot_names_both_files_it_wrote(tmp_path, capsys) -> None:
    """``maxminq plot RUN --out fig.svg`` answered "figure written to .../fig.png" alone,
    as if the .svg asked for had not been written; it names both now."""
    maxmin, _ = _two_runs(tmp_path)
    assert main(["plot", str(maxmin), "--panels", "return", "--out", str(tmp_path / "f.svg")]) == 0
    assert capsys.readouterr().out == f"figure written to {tmp_path / 'f.png'} and f.svg\n"
    assert (tmp_path / "f.svg").is_file() and (tmp_path / "f.png").is_file()


@pytest.mark.parametrize(
    "kwargs, option",
    [
        ({"out": 5}, "--out"),
        ({"out": ""}, "--out"),  # wrote curves.png into the current folder
        ({"panels": 5}, "--panels"),
        ({"panels": ["return", 3]}, "--panels"),
        ({"labels": "ab"}, "labels"),  # two runs: "a" and "b"
    ],
)
def test_plot_runs_options_of_another_type_are_one_line_naming_them(
    kwargs, option, tmp_path, monkeypatch
) -> None:
    runs = [
        finished_run(
            tmp_path / name,
            [(0, 1000, -1.0, 5)],
            steps=1000,
            train={0: (1000, 1.0)},
            tests={0: 1.0},
            agent=name,
        )  # fmt: skip
        for name in ("dqn", "ddqn")
    ]
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match=f"^{option}: expected "):
        analysis.plot_runs(runs, **kwargs)
    assert not list(tmp_path.rglob("*.png"))


def test_plot_names_each_unknown_panel_with_a_guess(tmp_path, capsys) -> None:
    """'--panels RETURN,biass' said 'expected names from ..., got 'RETURN,biass'': which
    name was wrong, and what was meant, was left to the reader."""
    from run_folders import finished_run

    run = finished_run(tmp_path / "run", [(0, 1000, -1.0, 5)], steps=1000,
                       train={0: (1000, 1.0)}, tests={0: 1.0})  # fmt: skip
    assert main(["plot", str(run), "--panels", "RETURN,q,biass,zzz"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "maxminq plot: error: --panels: unknown 'RETURN' (did you mean return?), 'biass' (did "
        "you mean bias?), 'zzz'; expected names from return, eval, bias, bias_abs, bias_std, q, "
        "loss, bias_dist"
    ]
    assert sorted(p.name for p in run.iterdir() if p.suffix in (".png", ".svg")) == []


def test_no_bias_measured_is_said_in_the_panel_and_warned_once(tmp_path, capsys) -> None:
    """MountainCar-v0 at gamma 0.99 with its 200-step limit: every probe is dropped, so the
    bias columns are all empty. The bias panel says 'no bias measured' (it was blank), and
    'maxminq plot' prints one warning line naming the run; a run with bias numbers next to
    it is drawn and not named, and without a bias panel nothing is warned."""
    rows = [(1000, NAN, -0.5), (2000, NAN, -0.9)]
    mc = _run(tmp_path / "mc", "dqn", [(200, -200.0), (400, -200.0)], rows, 2000)
    fig = training_runs_figure([("DQN", "dqn", read_tables(mc))], "t")
    panels = _panels(fig)
    bias = panels["estimation bias (above 0: over)"]
    assert "no bias measured" in _texts(bias)
    assert "0.05" in _texts(bias)  # the trainer's rule for cut episodes is named
    assert "bias_probe_every" in _texts(bias)  # and when probes are taken (none: none scored)
    assert not bias.get_lines()  # no zero line either: there is nothing to compare with it
    assert "no bias" not in _texts(panels["Q estimates (updated net)"])
    plt.close(fig)

    out = tmp_path / "fig"
    assert main(["plot", str(mc), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert (
        lines[0].startswith("maxminq plot: warning: no bias measured in ") and str(mc) in lines[0]
    )
    assert "bias panel is empty" in lines[0]
    assert (tmp_path / "fig.png").read_bytes()[:4] == b"\x89PNG"

    ok = _run(tmp_path / "ok", "maxmin-dqn", [(300, -190.0)], [(1000, -2.0, 0.3)], 2000)
    assert main(["plot", str(mc), str(ok), "--out", str(out)]) == 0
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and str(mc) in lines[0] and str(ok) not in lines[0]
    assert "missing from the bias panel" in lines[0]
    assert main(["plot", str(mc), "--panels", "return,q", "--out", str(out)]) == 0
    assert capsys.readouterr().err == ""


def test_panels_share_the_step_axis_of_the_run(tmp_path) -> None:
    """Acrobot, 1,200 steps: episodes end at 500 and 1000, bias numbers at 960 and 1040 (a
    finer metrics interval), Q at 1000 and 1200. Every panel spans steps 0 .. 1,200 (they
    spanned 500-1000, 960-1040 and 1000-1200), by default and with the run's length given."""
    bias_q = [(960, -3.0, NAN), (1000, NAN, 0.2), (1040, -2.0, NAN), (1200, NAN, 0.4)]
    run = _run(tmp_path / "acro", "dqn", [(500, -500.0), (1000, -480.0)], bias_q, 1200)
    for given in ({}, {"steps": 1200}):
        fig = training_runs_figure([("DQN", "dqn", read_tables(run))], "t", **given)
        limits = {ax.get_xlim() for ax in _panels(fig).values()}
        assert len(limits) == 1, limits  # one axis
        ((left, right),) = limits
        assert left == 0 and 1200 <= right <= 1.05 * 1200
        plt.close(fig)
    # a longer run given by its length (episodes and metrics end before it): 0 .. 5,000
    fig = training_runs_figure([("DQN", "dqn", read_tables(run))], "t", steps=5000)
    assert all(5000 <= ax.get_xlim()[1] <= 5250 for ax in _panels(fig).values())
    plt.close(fig)


def test_single_metrics_row_is_a_visible_point_with_its_own_marker(tmp_path) -> None:
    """Runs with one metrics row each are lone points: each must carry a marker big enough
    to see, a different one per run (two DQN runs share a colour, and their dashes do not
    show on a point), and the legend must show each run's marker. A lone run with one seed
    drew its one row as a line of one point, which shows nothing."""
    a = _run(tmp_path / "a", "dqn", [(100, 10.0), (300, 12.0)], [(1000, -1.0, 0.5)], 1000)
    b = _run(tmp_path / "b", "dqn", [(100, 11.0), (300, 13.0)], [(1000, -1.0, 0.5)], 1000)
    runs = [("DQN, lr 0.001", "dqn", read_tables(a)), ("DQN, lr 0.01", "dqn", read_tables(b))]
    fig = training_runs_figure(runs, "t")
    bias = _panels(fig)["estimation bias (above 0: over)"]
    points = {ln.get_label(): ln for ln in bias.get_lines() if len(ln.get_xdata()) == 1}
    assert set(points) == {"DQN, lr 0.001", "DQN, lr 0.01"}
    markers = {label: ln.get_marker() for label, ln in points.items()}
    assert None not in markers.values() and "None" not in markers.values()
    assert len(set(markers.values())) == 2  # told apart by shape, not only by dash
    assert all(ln.get_markersize() >= 5 for ln in points.values())
    (legend,) = fig.legends
    handles = zip(legend.texts, legend.legend_handles, strict=True)
    shown = {t.get_text(): h.get_marker() for t, h in handles}
    assert shown == markers
    plt.close(fig)

    fig = training_runs_figure([("DQN", "dqn", read_tables(a))], "t")
    (line,) = _panels(fig)["Q estimates (updated net)"].get_lines()
    assert line.get_marker() not in (None, "None", "") and line.get_markersize() >= 5
    plt.close(fig)


@pytest.mark.parametrize(
    ("cfgs", "want"),
    [
        # --hidden 256,256 against the default (not saved in config.json: the paper's 64,64)
        ([_cfg(), _cfg(hidden=[256, 256])], ["DQN, hidden 64,64", "DQN, hidden 256,256"]),
        # --env-kwargs '{"gravity": -5.0}' against none: only the run that set it says so
        ([_cfg(env_kwargs={"gravity": -5.0}), _cfg()], ["DQN, gravity=-5", "DQN"]),
        # a shared keyword is not named, the one that differs is
        (
            [
                _cfg(env_kwargs={"gravity": -5.0, "sutton_barto_reward": True}),
                _cfg(env_kwargs={"gravity": -5.0, "sutton_barto_reward": False}),
            ],
            ["DQN, sutton_barto_reward=true", "DQN, sutton_barto_reward=false"],
        ),
        # step size first, then the layers, when both differ
        (
            [_cfg(hidden=[32]), _cfg(lr=3e-4), _cfg()],
            ["DQN, lr 0.001, hidden 32", "DQN, lr 0.0003", "DQN, lr 0.001, hidden 64,64"],
        ),
        # any other setting that differs (--gamma, --loss) is named after those
        (
            [_cfg(gamma=0.9, loss="mse"), _cfg(gamma=0.99, loss="mse"), _cfg(gamma=0.99)],
            ["DQN, gamma 0.9", "DQN, gamma 0.99, loss mse", "DQN, gamma 0.99"],
        ),
        # a longer run is told by its steps, not by the metrics interval they imply
        (
            [_cfg(steps=400_000, bias_every=2000), _cfg(steps=100_000, bias_every=1000)],
            ["DQN, steps 400,000", "DQN, steps 100,000"],
        ),
        # one format at every length: "steps 1200" stood beside "steps 300,000"
        (
            [_cfg(steps=300_000), _cfg(steps=1200)],
            ["DQN, steps 300,000", "DQN, steps 1,200"],
        ),
        (
            [_cfg(env_kwargs={"max_steps": 5000}), _cfg(env_kwargs={"max_steps": 20_000})],
            ["DQN, max_steps=5,000", "DQN, max_steps=20,000"],
        ),
        # a Maxmin run alone in its agent and N keeps its plain label
        (
            [_cfg(hidden=[256, 256]), _cfg(), _cfg(agent="maxmin-dqn", n=2, hidden=[8])],
            ["DQN, hidden 256,256", "DQN, hidden 64,64", "Maxmin DQN (N=2)"],
        ),
    ],
)
def test_labels_name_hidden_layers_and_env_keywords(tmp_path, cfgs, want) -> None:
    """Runs that differ only in --hidden or --env-kwargs were labelled by folder name
    ('DQN, deep-499cfc930c3a'); the label names what differs."""
    folders = [tmp_path / f"deep-{i}" for i in range(len(cfgs))]
    assert run_labels(cfgs, folders) == want


def test_labels_of_identical_settings_still_fall_back_to_folders(tmp_path) -> None:
    """Two sets of seeds of one setting (same hidden, same keywords) keep the folder names."""
    cfgs = [_cfg(hidden=[256, 256], env_kwargs={"gravity": -5.0})] * 2
    assert run_labels(cfgs, [tmp_path / "x", tmp_path / "y"]) == ["DQN, x", "DQN, y"]


def test_plot_legend_names_env_keyword_end_to_end(tmp_path, capsys) -> None:
    """Through the command: the legend of two runs differing in env_kwargs names it."""
    ep, rows = [(100, 10.0), (200, 11.0)], [(200, -1.0, 0.5)]
    a = _run(tmp_path / "deep-aaa", "dqn", ep, rows, 200, env_kwargs={"gravity": -5.0})
    b = _run(tmp_path / "deep-bbb", "dqn", ep, rows, 200)
    svg = tmp_path / "c.svg"
    assert main(["plot", str(a), str(b), "--out", str(tmp_path / "c")]) == 0
    text = svg.read_text()
    assert "gravity=-5" in text and "deep-aaa" not in text
    np.testing.assert_equal(capsys.readouterr().err, "")


def test_one_run_redrawn_names_its_agent_and_n_in_the_title(tmp_path) -> None:
    """'maxminq plot RUN_DIR' of one run draws no legend, and its title named only the
    environment: a redrawn Maxmin N = 4 bias curve did not say whose it was. Now it is
    titled as 'maxminq train' titles it; several runs keep the environment title."""
    one = _run(tmp_path / "mm", "maxmin-dqn", [(100, -200.0)], [(100, 1.0, 0.1)], 100, n=4)
    (one / "tests.csv").write_text("seed,episode,return,length\n0,1,-150,150\n0,2,-170,170\n")
    dqn = _run(tmp_path / "dqn", "dqn", [(100, -200.0)], [(100, 2.0, 0.1)], 100)
    folders = [one, dqn]
    cfgs = [run_settings(f) for f in folders]
    tables = [read_tables(f) for f in folders]
    labels = run_labels(cfgs, folders)
    # One seed, test returns -150 and -170: mean -160 (one seed has no standard error).
    want = "Maxmin DQN (N=4) on MountainCar-v0, 1 seed; test return -160.0"
    assert figure_title(cfgs[:1], labels[:1], tables[:1]) == want
    assert figure_title(cfgs, labels, tables) == "MountainCar-v0, 1 seed per run"
    assert main(["plot", str(one), "--out", str(tmp_path / "one.png")]) == 0


def test_runs_without_a_finished_episode_are_one_line_and_write_nothing(tmp_path, capsys) -> None:
    """150 steps of MountainCar-v0 (episodes of 200 steps) end no episode: nothing to draw
    the returns from, said in one line; no figure and no --out folder are left."""
    run = _run(tmp_path / "short", "dqn", [], [(100, NAN, -0.3), (150, NAN, -0.4)], 150)
    assert len(pd.read_csv(run / "episodes.csv")) == 0
    out = tmp_path / "new" / "fig"
    assert main(["plot", str(run), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "maxminq plot: error: RUN_DIR: no episode finished in these runs; nothing to plot"
    ]
    assert not (tmp_path / "new").exists()


def test_bias_dist_draws_pooled_quantiles_per_metrics_interval(tmp_path) -> None:
    """The bias_dist panel's line is each interval's median of the per-probe bias and its
    band the 10% and 90% quantiles, the probes of both seeds pooled (numpy's quantiles of
    the hand-binned biases), at the metrics steps the bias panel draws, with a zero line."""
    run = _run(tmp_path / "r", "maxmin-dqn", [(100, 10.0), (250, 20.0)], [], 250, seeds=[0, 1])
    _probes(run, BINNED_PROBES, BINNED_METRICS)
    steps = sorted(POOLED)
    want = np.array([np.quantile(POOLED[s], [0.1, 0.5, 0.9]) for s in steps])
    tables = read_tables(run)
    q = bias_quantiles(probe_intervals(tables["probes"], tables["metrics"]))
    np.testing.assert_allclose(q[["step", "q10", "q50", "q90"]], np.c_[steps, want])
    assert q["n"].tolist() == [len(POOLED[s]) for s in steps]

    # Drawn in a comparison (the run's own curve in its legend colour) and alone.
    other = _run(tmp_path / "o", "dqn", [(100, 10.0)], [], 250)
    _probes(other, [(0, 90, 7.0)], {0: [100, 200, 250]})
    mm = ("Maxmin DQN (N=2)", "maxmin-dqn", tables)
    for runs in ([mm], [mm, ("DQN", "dqn", read_tables(other))]):
        fig = training_runs_figure(runs, "t", panels=["return", "bias_dist"])
        ax = _panels(fig)["bias per probe, all seeds pooled"]
        (median,) = [ln for ln in ax.get_lines() if ln.get_label() == "Maxmin DQN (N=2)"]
        np.testing.assert_allclose(median.get_xdata(), steps)
        np.testing.assert_allclose(median.get_ydata(), want[:, 1])
        assert median.get_color() == "#2ca02c"  # style's Maxmin colour
        band = ax.collections[0].get_paths()[0].vertices  # the run's band: first drawn
        for s, (low, _, high) in zip(steps, want, strict=True):
            at = band[np.isclose(band[:, 0], s), 1]
            assert (at.min(), at.max()) == pytest.approx((low, high))
        zero = [ln for ln in ax.get_lines() if ln.get_linestyle() == "--"]
        assert any(set(ln.get_ydata()) == {0.0} for ln in zero)
        plt.close(fig)


def test_bias_dist_of_a_run_without_probes_is_a_usage_error(tmp_path, capsys) -> None:
    """A run trained without --save-probes has no per-probe biases: 'maxminq plot --panels
    ...,bias_dist' says so in one line naming --panels, the folder and --save-probes, exit
    2, and writes nothing, also next to a run that has them; the Python function raises."""
    with_probes = _run(tmp_path / "p", "dqn", [(100, 10.0)], [(100, -1.0, 0.5)], 100)
    _probes(with_probes, [(0, 50, -1.0)], {0: [100]})
    without = _run(tmp_path / "np", "dqn", [(100, 10.0)], [(100, -1.0, 0.5)], 100)
    out = tmp_path / "new" / "fig"
    args = ["plot", str(with_probes), str(without), "--panels", "return,bias_dist"]
    assert main([*args, "--out", str(out)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("maxminq plot: error: --panels: bias_dist ")
    assert f"{without} has no probes.csv" in line and "--save-probes" in line
    assert not (tmp_path / "new").exists()
    assert main([*args[:3], "--panels", "return,bias", "--out", str(out)]) == 0  # no bias_dist
    with pytest.raises(ValueError, match="bias_dist.*save_probes.*none in 'DQN'$"):
        training_runs_figure([("DQN", "dqn", read_tables(without))], "t", panels=["bias_dist"])


def test_plot_writes_bias_dist_figure_and_names_a_run_without_scored_probes(
    tmp_path, capsys
) -> None:
    """'--panels return,bias_dist' writes the figure (PNG and SVG, the panel's title in it).
    A run whose probes table has no row (every probe dropped) is named in one warning, as
    for the bias panel; alone, its panel says no bias was measured."""
    run = _run(tmp_path / "r", "maxmin-dqn", [(100, 10.0), (250, 20.0)], [], 250, seeds=[0, 1])
    _probes(run, BINNED_PROBES, BINNED_METRICS)
    out = tmp_path / "fig"
    assert main(["plot", str(run), "--panels", "return,bias_dist", "--out", str(out)]) == 0
    assert capsys.readouterr().err == ""
    assert (tmp_path / "fig.png").read_bytes()[:4] == b"\x89PNG"
    assert "bias per probe, all seeds pooled" in (tmp_path / "fig.svg").read_text()

    empty = _run(tmp_path / "e", "dqn", [(200, -200.0)], [(200, NAN, 0.1)], 200)
    _probes(empty, [], {0: [200]})
    assert len(pd.read_csv(empty / "probes.csv")) == 0
    assert main(["plot", str(run), str(empty), "--panels", "bias_dist", "--out", str(out)]) == 0
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("maxminq plot: warning: no bias measured in ") and str(empty) in line
    assert str(run) not in line and "missing from the bias panel" in line
    fig = training_runs_figure([("DQN", "dqn", read_tables(empty))], "t", panels=["bias_dist"])
    (ax,) = _panels(fig).values()
    assert "no bias measured" in _texts(ax) and not ax.get_lines()
    plt.close(fig)


def test_a_run_given_twice_is_one_line_and_draws_nothing(tmp_path, capsys) -> None:
    """'maxminq plot a b a' drew a's curves twice; like compare (the same check), it is a
    RUN_DIR error naming the repeated folder, under either spelling, and writes nothing."""
    a = _run(tmp_path / "a", "dqn", [(200, -150.0)], [(100, 1.0, -0.3)], 200)
    b = _run(tmp_path / "b", "maxmin-dqn", [(200, -140.0)], [(100, -1.0, -0.5)], 200)
    again = tmp_path / "b" / ".." / "a"
    for runs, named in (
        ([a, b, a], f"{a} is given twice"),
        ([a, again], f"{again} is given twice (also as {a})"),
    ):
        out = tmp_path / "fig"
        assert main(["plot", *map(str, runs), "--out", str(out)]) == 2
        assert capsys.readouterr().err.strip().splitlines() == [
            f"maxminq plot: error: RUN_DIR: {named}"
        ]
        assert not list(tmp_path.glob("fig*"))
    assert main(["plot", str(a), str(b), "--out", str(tmp_path / "fig")]) == 0


@pytest.mark.parametrize("n_runs", [2, 6, 11])
def test_shared_legend_keeps_clear_of_every_panel(n_runs) -> None:
    """Six runs wrap the shared legend (five entries a row) to two rows, eleven to three; the
    layout left room for one, so the second row lay over the panels' x-axis labels. The
    legend's box, as drawn, lies below each panel's whole box (tick labels and axis label
    included)."""
    fig = training_runs_figure(_runs_of(n_runs), "t")
    (legend,) = fig.legends
    box = legend.get_window_extent()  # in pixels, from the figure's renderer
    assert len(legend.texts) == n_runs
    for ax in _panels(fig).values():
        panel = ax.get_tightbbox()
        assert box.y1 < panel.y0, (ax.get_title(), box, panel)
    plt.close(fig)


def test_long_metrics_are_drawn_as_window_means_and_short_ones_raw() -> None:
    """2M steps logged every 1,500 drew 1,333 unsmoothed points per bias curve. With more
    than 100 metrics rows per seed, each seed's rows are averaged over windows of
    about ceil(rows / 100) consecutive rows, as equal as can be (at the windows' mean step),
    then mean +- SE over seeds, as the y label says; with 100 or fewer, every logged value
    is drawn. Expected values by numpy from the made-up rows."""
    steps = np.arange(1, 251) * 10  # 250 rows: 84 windows, 82 of 3 rows and 2 of 2
    bias = {0: np.sin(steps / 70.0), 1: 0.5 + np.cos(steps / 90.0)}
    metrics = pd.concat(
        pd.DataFrame({"seed": s, "step": steps, "bias_mean": b, "q_mean": 1.0})
        for s, b in bias.items()
    )
    episodes = pd.DataFrame({"seed": [0, 1], "step": [2500, 2500], "return_avg100": 1.0})
    runs = [("Maxmin DQN (N=2)", "maxmin-dqn", {"episodes": episodes, "metrics": metrics})]

    def windows(x: np.ndarray) -> np.ndarray:
        return np.array([w.mean() for w in np.array_split(x, 84)])

    per_seed = np.vstack([windows(b) for b in bias.values()])
    fig = training_runs_figure(runs, "t", panels=["bias"])
    ax = _panels(fig)["estimation bias (above 0: over)"]
    (mean,) = [ln for ln in ax.get_lines() if ln.get_label() == "Maxmin DQN (N=2)"]
    np.testing.assert_allclose(mean.get_xdata(), windows(steps.astype(float)))
    np.testing.assert_allclose(mean.get_ydata(), per_seed.mean(axis=0))
    assert len(mean.get_xdata()) == 84
    thin = [ln for ln in ax.get_lines() if ln.get_alpha() == 0.35]  # one per seed
    for line, want in zip(thin, per_seed, strict=True):
        np.testing.assert_allclose(line.get_ydata(), want)
    band = ax.collections[0].get_paths()[0].vertices
    se = per_seed.std(axis=0, ddof=1) / np.sqrt(2)
    at = band[np.isclose(band[:, 0], 20.0), 1]  # the first window: steps 10, 20, 30
    first = per_seed[:, 0].mean()
    assert (at.min(), at.max()) == pytest.approx((first - se[0], first + se[0]))
    assert ax.get_ylabel() == "estimate - MC return\n(means of 2-3 metrics rows)"
    plt.close(fig)

    short = metrics[metrics["step"] <= 1000]  # 100 rows: all drawn as logged
    runs = [("Maxmin DQN (N=2)", "maxmin-dqn", {"episodes": episodes, "metrics": short})]
    fig = training_runs_figure(runs, "t", panels=["bias"])
    ax = _panels(fig)["estimation bias (above 0: over)"]
    (mean,) = [ln for ln in ax.get_lines() if ln.get_label() == "Maxmin DQN (N=2)"]
    np.testing.assert_allclose(mean.get_xdata(), steps[:100])
    np.testing.assert_allclose(mean.get_ydata(), (bias[0][:100] + bias[1][:100]) / 2)
    assert ax.get_ylabel() == "estimate - MC return"
    plt.close(fig)


@pytest.mark.parametrize(
    ("panels", "n_runs"),
    [(("return", "bias"), 1), (("return", "bias", "q"), 2), (("q", "loss"), 2), (("return",), 1)],
)
def test_caption_describes_the_panels_drawn(tmp_path, panels, n_runs) -> None:
    """The caption described a Q panel whatever was drawn (the report's published runs,
    return and bias only, wrote their own). It names the drawn panels' titles in order and
    explains those and no other; thin lines only for one run; the window means only with
    a metrics panel."""
    runs = _runs_of(n_runs)
    fig = training_runs_figure(runs, "t", panels=panels)
    titles = [ax.get_title() for ax in fig.axes]  # the panels drawn, left to right
    plt.close(fig)
    figure = fig_training_runs(runs, "t", tmp_path, panels=panels)
    assert figure is not None
    caption = figure.caption
    assert caption.lower().startswith(", ".join(titles).lower() + " against environment steps")
    for panel, phrase in CAPTION_PHRASES.items():
        assert (phrase in caption) == (panel in panels), (panel, caption)
    assert ("thin lines" in caption) == (n_runs == 1)
    assert ("windows of consecutive intervals" in caption) == (panels != ("return",))


def test_plot_removes_the_temporaries_a_killed_plot_left(tmp_path, capsys) -> None:
    """A plot killed (kill -9) while writing its figure left a hidden .NAME.XXXXXXXX.tmp
    beside it for good; the next plot to that path removes its own figure's temporaries,
    not a user's file or another figure's."""
    from killed_writes import decoys, killed_write

    rows = [(1000, 0.5, 1.0), (2000, 0.2, 1.2)]
    run = _run(tmp_path / "r", "dqn", [(200, -150.0), (400, -120.0)], rows, 2000)
    figs = tmp_path / "figs"
    figs.mkdir()
    left = [killed_write(figs / "a.png"), killed_write(figs / "a.svg")]
    other = killed_write(figs / "b.png")  # another figure's: maybe being written now
    keep = [*decoys(figs, "a.png"), other]
    assert main(["plot", str(run), "--out", str(figs / "a.png")]) == 0
    assert not any(p.exists() for p in left)
    assert all(p.is_file() for p in keep)
    names = ["a.png", "a.svg", *(p.name for p in keep)]
    assert sorted(p.name for p in figs.iterdir()) == sorted(names)


def test_two_seeds_give_mean_and_standard_error() -> None:
    # seed means 1 and 3: mean 2, sd sqrt(2), SE sqrt(2) / sqrt(2) = 1
    tests = pd.DataFrame({"seed": [0, 0, 1, 1], "return": [0.0, 2.0, 3.0, 3.0]})
    title = run_title("DQN", "CartPole-v1", 2, tests)
    assert title == "DQN on CartPole-v1, 2 seeds; test return 2.0 +- 1.0"


def test_one_seed_has_no_standard_error() -> None:
    tests = pd.DataFrame({"seed": [5, 5], "return": [4.0, 6.0]})
    title = run_title("DQN", "CartPole-v1", 1, tests)
    assert title == "DQN on CartPole-v1, 1 seed; test return 5.0"
