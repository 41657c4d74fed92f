"""Review 18, h5: a newcomer's path through the README (reproduce a figure, train Maxmin DQN
on an environment of one's own, compare it with DQN on a plot). Each test pins a place where
the command did something other than what its help or the README led the user to expect."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from docs_text import page  # noqa: E402
from run_folders import finished_run  # noqa: E402

from maxminq.cli import main  # noqa: E402

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


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


@pytest.mark.parametrize("env_id", ["CartPole-v1", "maxminq/MinAtar-Breakout-v0"])
def test_envs_one_id_names_the_train_options_and_each_agents_defaults(env_id: str, capsys) -> None:
    """``maxminq envs --env ID`` printed the registry's field names and Python reprs
    (``train_steps 500000``, ``best {'dqn': {'lr': 0.0003, 'n': None}, ...}``, no Ensemble
    DQN): a newcomer could not tell which ``train`` option each value is the default of, nor
    which --lr and --n an agent gets. Now: option names, thousands separators, and per agent
    the --lr and --n that ``TrainConfig.resolve`` (what train runs) gives it."""
    from maxminq.deep import TrainConfig

    assert main(["envs", "--env", env_id]) == 0
    out = capsys.readouterr().out
    assert "{'" not in out and "train_steps" not in out  # no dict reprs, no field names
    resolved = TrainConfig(env_id=env_id, agent="dqn").resolve()
    lines = {line.split()[0]: line.split()[1] for line in out.splitlines() if line[:4] == "  --"}
    assert lines["--steps"] == f"{resolved.steps:,}"
    assert lines["--buffer-size"] == f"{resolved.buffer_size:,}"
    assert lines["--target-update"] == f"{resolved.target_update:,}"
    assert lines["--bias-every"] == f"{resolved.bias_every:,}"
    assert lines["--checkpoint-every"] == f"{resolved.checkpoint_every:,}"
    assert lines["--optimizer"] == resolved.optimizer and lines["--loss"] == resolved.loss
    for agent in ("dqn", "ddqn", "maxmin-dqn", "averaged-dqn", "ensemble-dqn"):
        c = TrainConfig(env_id=env_id, agent=agent).resolve()
        row = next(line.split() for line in out.splitlines() if line.split()[:1] == [agent])
        assert row[1:5] == ["--lr", f"{c.lr:g}", "--n", str(c.n)], (agent, row)


def test_envs_one_id_marks_a_non_paper_id_as_assumed(capsys) -> None:
    """An id outside the paper says that its settings are carried over (LunarLander's step
    sizes and N), a paper id says it has the paper's."""
    assert main(["envs", "--env", "CartPole-v1"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("CartPole-v1: not a paper environment"), first
    assert main(["envs", "--env", "LunarLander-v3"]) == 0
    assert capsys.readouterr().out.startswith("LunarLander-v3: a paper environment")


@pytest.mark.parametrize("script", sorted(p.name for p in EXAMPLES.glob("*.py")))
def test_every_example_help_says_where_out_goes(script: str, capsys) -> None:
    """Each example's ``--out OUT`` had no help text, so ``--help`` did not say where the
    files land by default; now it names the default folder (checked against the parser's
    own default) and that the folder is created."""
    spec = importlib.util.spec_from_file_location(f"_journey18_{script[:-3]}", EXAMPLES / script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    default = module.parse_args([]).out
    with pytest.raises(SystemExit):
        module.parse_args(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"(default {default})" in text
    assert "--out OUT output folder, created if needed" in text


def test_report_of_an_experiment_folder_says_what_to_run(tmp_path, capsys) -> None:
    """``maxminq report results/toy_mdp`` (the folder 'maxminq experiment toy-mdp' wrote, a
    newcomer's first reproduction) said only "holds neither results.sqlite ... nor
    theory/bias.csv; nothing to report"; now it says whose output it is and which command
    puts that experiment into a report."""
    out = tmp_path / "toy"
    out.mkdir()  # what the command leaves (its settings.json names the experiment)
    (out / "settings.json").write_text('{"experiment": "toy-mdp", "runs": 5000}')
    (out / "toy_mdp.csv").write_text("mu,algorithm,n,run,episode,p_left,distance,q_a_left\n")
    assert main(["report", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith(f"maxminq report: error: DIR: {out} holds the output of 'maxminq "
                          "experiment toy-mdp'")  # fmt: skip
    assert "'maxminq reproduce --only toy_mdp'" in err
    assert not (out / "report.html").exists()


@pytest.mark.parametrize("nested", [False, True])
def test_report_of_a_folder_of_train_runs_points_to_compare(nested: bool, tmp_path, capsys) -> None:
    """``maxminq report runs`` on a folder of 'maxminq train' runs (flat, or laid out as
    docs/runs is, <env>/<run>) named no command that reads them; now it names compare and
    plot with two of its runs (of one environment folder), and --published for the nested
    layout only (the one --published takes)."""
    root = tmp_path / "runs"
    base = root / "lunar" if nested else root
    for agent in ("dqn", "maxmin"):
        finished_run(base / agent, [(0, 1000, -1.0, 5)], steps=1000,
                     train={0: (1000, 1.0)}, tests={0: 1.0})  # fmt: skip
    if nested:
        finished_run(root / "cart" / "dqn", [(0, 1000, -1.0, 5)], steps=1000,
                     train={0: (1000, 1.0)}, tests={0: 1.0})  # fmt: skip
    assert main(["report", str(root)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    # nested: the environment folder with two runs (cart/ has one), not the first found
    assert f"(e.g. 'maxminq compare {base / 'dqn'} {base / 'maxmin'}')" in err, err
    assert ("--published" in err) is nested


def test_compare_help_matches_the_readme_synopsis(capsys) -> None:
    """The synopsis in docs/deep-agents.md, ``maxminq compare RUN_DIR [RUN_DIR ...]
    [--baseline K] [--seed S] [--csv FILE]``, and the command's usage named the same options
    differently (``--seed SEED``, ``--csv PATH``); its epilog said n/a only for runs of one
    seed, while the table also prints n/a when no seed's score differs (CartPole's 500s)."""
    synopsis = (
        page("deep-agents").split("`maxminq compare RUN_DIR [RUN_DIR ...] ", 1)[1].split("`", 1)[0]
    )
    with pytest.raises(SystemExit):
        main(["compare", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for option in synopsis.split("] ["):
        assert option.strip("[]") in text.split("RUN_DIR")[0], option  # in the usage line
    assert "when in each run every seed scored the same" in text


@pytest.mark.parametrize("script", sorted(p.name for p in EXAMPLES.glob("*.py")))
def test_every_example_refuses_an_out_that_is_a_file(script: str, tmp_path, capsys) -> None:
    """``python examples/NAME.py --out FILE`` (a typo, or an existing file's name) ended in
    a FileExistsError or StoreError traceback, in four of the five scripts after their
    work; now the options are refused in one line naming --out, before any work."""
    spec = importlib.util.spec_from_file_location(f"_journey18o_{script[:-3]}", EXAMPLES / script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    target = tmp_path / "notes.txt"
    target.write_text("mine\n")
    with pytest.raises(SystemExit) as stop:
        module.parse_args(["--quick", "--out", str(target)])
    assert stop.value.code == 2
    assert (
        capsys.readouterr()
        .err.strip()
        .splitlines()[-1]
        .endswith(f"error: --out: {target} exists and is not a folder")
    )
    assert target.read_text() == "mine\n"


def test_toy_mdp_says_how_large_its_csv_will_be(tmp_path, monkeypatch, capsys) -> None:
    """'maxminq experiment toy-mdp' at its defaults (the paper's grid, to reproduce Fig. 2)
    wrote a 2.7 GB toy_mdp.csv (60,000,000 rows) without a word; now a CSV of 1 GB or more is
    announced on stderr before the work, with its rows and size and how to shrink it. The
    threshold is lowered here so that a tiny run crosses it (1,200 runs x 1 episode x one
    setting = 1,200 rows); the summary line prints its counts with thousands separators."""
    from maxminq.commands import experiment

    argv = ["experiment", "toy-mdp", "--runs", "1200", "--episodes", "1", "--mu", "0.1"]
    argv += ["--algorithms", "q_learning", "--workers", "1", "--no-progress"]
    monkeypatch.setattr(experiment, "CSV_NOTE_BYTES", 1200 * 45)
    assert main([*argv, "--out", str(tmp_path / "a")]) == 0
    captured = capsys.readouterr()
    assert captured.err == (
        "toy MDP: note: toy_mdp.csv will hold 1,200 rows (one per run and episode), about "
        "0.0 GB on disk; fewer --runs or --episodes (--quick: 300 x 300) make it smaller\n"
    )
    assert "x 1,200 runs x 1 episode simulated in" in captured.out
    assert len((tmp_path / "a" / "toy_mdp.csv").read_text().splitlines()) == 1 + 1200


def test_top_level_help_says_what_command_is(capsys) -> None:
    """``maxminq --help`` listed ``COMMAND`` under positional arguments with nothing beside
    it; it now points to the list of commands below."""
    with pytest.raises(SystemExit):
        main(["--help"])
    lines = capsys.readouterr().out.splitlines()
    row = lines[lines.index("positional arguments:") + 1].split()
    assert row[0] == "COMMAND" and " ".join(row[1:]) == "one of the commands below"


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
