"""``--published DIR`` of ``maxminq report`` and ``maxminq reproduce``: a section of finished
runs trained elsewhere, per environment the ``compare_runs`` table against DQN and a figure
of the runs' curves; bad values refused in one line before anything is written.

The runs are hand-written folders with known per-seed scores and biases (``test_compare``'s
``_run``), so the expected means, SEs, Welch p and P(improve) are worked out here, and two
published runs of docs/runs, read-only, whose numbers docs/runs/README.md lists."""

from __future__ import annotations

import base64
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from analysis_results import _run, _welch, theory_files
from helpers import REPO

from maxminq.analysis.compare import compare_runs
from maxminq.analysis.report import build_report, published_runs
from maxminq.cli import main

DOCS_RUNS = REPO / "docs" / "runs"


TITLE = "## Published full-length runs (not re-run by this command)"


def _mean_se(x: list[float]) -> str:
    """``mean ± SE`` (SE: std with ddof 1 over sqrt(n)), 2 decimals, from the formula."""
    return f"{np.mean(x):.2f} ± {np.std(x, ddof=1) / math.sqrt(len(x)):.2f}"


def _section(md: str) -> str:
    start = md.index(TITLE)
    return md[start : md.index("\n## ", start + 1)]


@pytest.fixture
def published(tmp_path: Path) -> Path:
    """CartPole: DQN (seed scores 0, 2, 2, 5; second-half bias 4 each) and Maxmin DQN
    (1, 2, 3, 6; bias 1, 2, 3, 4); Acrobot: Averaged and Maxmin DQN, no DQN."""
    root = tmp_path / "published"
    (root / "cartpole").mkdir(parents=True)
    (root / "acrobot").mkdir()
    maxmin = {s: [v, v] for s, v in enumerate([1, 2, 3, 6])}
    _run(root / "cartpole" / "maxmin", "maxmin-dqn", maxmin,
         bias={s: (9.0, b) for s, b in enumerate([1.0, 2.0, 3.0, 4.0])})  # fmt: skip
    dqn = {s: [v - 1, v + 1] for s, v in enumerate([0, 2, 2, 5])}
    _run(root / "cartpole" / "dqn", "dqn", dqn, bias={s: (9.0, 4.0) for s in range(4)})
    _run(root / "acrobot" / "averaged", "averaged-dqn", {0: [-90.0], 1: [-80.0]},
         env_id="Acrobot-v1", n=3)  # fmt: skip
    _run(root / "acrobot" / "maxmin", "maxmin-dqn", {0: [-70.0], 1: [-60.0]}, env_id="Acrobot-v1")
    return root


def _bad(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """Bad --published values and what their error says."""
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes").mkdir()  # a folder, but no run in it
    broken = tmp_path / "broken" / "env" / "run"
    broken.mkdir(parents=True)
    (broken / "runs.csv").write_text("seed,status,diverged_step\n0,done,-1\n")  # no config.json
    one = _run(tmp_path / "one", "dqn", {0: [1.0], 1: [2.0]})
    (tmp_path / "file.txt").write_text("x")
    return {
        "missing": (tmp_path / "missing", "is not a folder"),
        "file": (tmp_path / "file.txt", "is not a folder"),
        "empty": (empty, "holds no run folders"),
        "broken": (tmp_path / "broken", "holds no finished deep run"),
        "one run": (one, "is one run folder"),
    }


def test_report_counts_one_published_run_in_the_singular(tmp_path, capsys) -> None:
    """'published (not re-run, no claims): CartPole-v1: 1 runs'."""
    from run_folders import finished_run

    finished_run(tmp_path / "pub" / "cart" / "dqn", [(0, 1000, -1.0, 5)], steps=1000,
                 train={0: (1000, 1.0)}, tests={0: 1.0})  # fmt: skip
    theory = tmp_path / "theory"
    theory.mkdir()
    (theory / "bias.csv").write_text("M,N,expected_bias\n1,1,0.5\n1,2,0.2\n")
    argv = ["report", str(theory), "--reps", "100", "--published", str(tmp_path / "pub")]
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert "  published (not re-run, no claims): CartPole-v1: 1 run" in out, out


def test_the_section_shows_each_environments_compare_runs_table_and_figure(
    tmp_path: Path, published: Path, capsys
) -> None:
    out = tmp_path / "out"
    theory_files(out / "theory")
    assert main(["report", str(out), "--reps", "100", "--published", str(published)]) == 0
    printed = capsys.readouterr().out
    assert "published (not re-run, no claims): CartPole-v1: 2 runs, against DQN" in printed
    assert "published (not re-run, no claims): Acrobot-v1: 2 runs\n" in printed
    md = (out / "report.md").read_text()
    section = _section(md)
    assert "**not trained by this command**" in section and f"`{published}`" in section
    assert "1,000 steps and 2 to 4 seeds each" in section  # _run's runs: 1,000 steps
    assert "averaged 20 runs per setting" in section and "swept the step size" in section
    # environments in the paper's order, the others by name: Acrobot, then CartPole
    acro = section[section.index("### Acrobot-v1") : section.index("### CartPole-v1")]
    cart = section[section.index("### CartPole-v1") :]
    # CartPole: DQN first (the baseline), then Maxmin DQN; the numbers from their formulas
    a, b = [1, 2, 3, 6], [0, 2, 2, 5]
    p = _welch(a, b)[2]
    improve = (1 + 2 + 3 + 4) / 16  # pairs a > b, ties (2 = 2 twice) counted half
    assert "Against DQN (`cartpole/dqn`)." in cart
    assert f"| DQN | cartpole/dqn | 0.001 | 1,000 | 4 | {_mean_se(b)} |" in cart
    row = next(line for line in cart.splitlines() if line.startswith("| Maxmin DQN (N=2) |"))
    cells = row.strip("| ").split(" | ")
    assert cells[1:6] == ["cartpole/maxmin", "0.001", "1,000", "4", _mean_se(a)]
    assert cells[7] == _mean_se([1.0, 2.0, 3.0, 4.0]).replace("2.50", "+2.50")  # 2nd half
    assert cells[8:] == ["+0.75", f"{p:.3f}", f"{improve:.2f}"]
    # and every cell is compare_runs's number on the same folders
    cart = [published / "cartpole" / "dqn", published / "cartpole" / "maxmin"]
    table = compare_runs(cart, baseline=1)
    r = table.iloc[1]
    assert cells[6] == f"{r['iqm']:.2f} [{r['iqm_low']:.2f}, {r['iqm_high']:.2f}]"
    assert (r["p"], r["p_improve"], r["diff"]) == pytest.approx((p, improve, 0.75))
    # Acrobot: no DQN, so no baseline and no test columns
    assert "No DQN run: no tests." in acro and "diff vs DQN" not in acro
    assert "| Averaged DQN (K=3) | acrobot/averaged | 0.001 | 1,000 | 2 | -85.00 ± 5.00 |" in acro
    # unrounded: the two compare_runs tables, one after the other
    both = pd.concat([compare_runs(sorted(published.glob("acrobot/*"))), table], ignore_index=True)
    assert (out / "summary" / "published_runs.csv").read_text() == both.to_csv(index=False)
    # one figure per environment, in figures/published, linked and embedded
    html = (out / "report.html").read_text()
    for name in ("cartpole", "acrobot"):
        png = out / "figures" / "published" / f"{name}.png"
        assert f"](figures/published/{name}.png)" in section
        assert base64.b64encode(png.read_bytes()).decode("ascii") in html
    # the published runs enter no claim: the deep claims are still unchecked
    assert re.search(r"Not checked, no data in this folder: .*Deep RL", md)


def test_published_docs_runs_give_the_numbers_docs_runs_lists(tmp_path: Path) -> None:
    """docs/runs/catcher, read where it is (a link): docs/runs/README.md gives DQN
    58.80 +- 0.04 and Maxmin DQN 58.81 +- 0.04, 300,000 steps, 4 seeds."""
    root = tmp_path / "published"
    root.mkdir()
    (root / "catcher").symlink_to(DOCS_RUNS / "catcher", target_is_directory=True)
    report = build_report(tmp_path / "out", published=published_runs(root))
    section = _section(report.markdown.read_text())
    assert '### maxminq/Catcher-v0 {"normalize": true}' in section
    assert "| DQN | catcher/dqn | 0.0001 | 300,000 | 4 | 58.80 ± 0.04 |" in section
    assert (
        "| Maxmin DQN (N=6) | catcher/maxmin-dqn | 0.0003 | 300,000 | 4 | 58.81 ± 0.04 |" in section
    )
    assert report.published == ['maxminq/Catcher-v0 {"normalize": true}: 2 runs, against DQN']
    # Written again without them, the report leaves none of their files behind.
    assert (tmp_path / "out" / "figures" / "published" / "catcher.png").exists()
    build_report(tmp_path / "out")
    assert not (tmp_path / "out" / "figures" / "published").exists()
    assert not (tmp_path / "out" / "summary" / "published_runs.csv").exists()


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_no_section_without_published(tmp_path: Path) -> None:
    theory_files(tmp_path / "theory")
    report = build_report(tmp_path)
    assert "Published" not in report.markdown.read_text() and report.published == []


@pytest.mark.parametrize("case", ["missing", "file", "empty", "broken", "one run"])
def test_bad_published_is_one_line_and_exit_2_before_any_work(
    tmp_path: Path, capsys, case: str
) -> None:
    path, says = _bad(tmp_path)[case]
    out = tmp_path / "out"
    theory_files(out / "theory")
    before = sorted(out.rglob("*"))
    assert main(["report", str(out), "--published", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("maxminq report: error: --published: "), err
    assert says in err[0]
    assert sorted(out.rglob("*")) == before  # no report, figure or summary written
    again = tmp_path / "again"
    argv = ["reproduce", "--out", str(again), "--only", "theory", "--published", str(path)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("maxminq reproduce: error: --published: "), err
    assert not again.exists()


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_reproduce_reports_the_published_runs_beside_its_own(
    tmp_path: Path, published: Path, capsys
) -> None:
    from analysis_results import TINY_TOY

    configs = tmp_path / "configs"
    configs.mkdir()
    (configs / "tiny_toy.yaml").write_text(TINY_TOY)
    out = tmp_path / "out"
    argv = ["reproduce", "--out", str(out), "--configs", str(configs), "--only", "tiny_toy"]
    assert main([*argv, "--workers", "1", "--no-progress", "--published", str(published)]) == 0
    assert "published (not re-run, no claims): CartPole-v1: 2 runs, against DQN" in (
        capsys.readouterr().out
    )
    md = (out / "report.md").read_text()
    assert "| DQN | cartpole/dqn | 0.001 | 1,000 | 4 | 2.25 ± 1.03 |" in _section(md)
    assert "Toy MDP" in md and "--published" in md  # its own runs, and the command
