"""The closing lines 'maxminq reproduce' prints (session 25): the report's two files
together, then what the report says; the total beside the report's own wall time."""

from __future__ import annotations

import json
import re

import pytest


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_reproduce_prints_both_report_files_together_and_explains_its_total(tmp_path, capsys):
    import sweep_kinds as helpers
    from run_folders import finished_run

    from maxminq.cli import main

    configs = tmp_path / "configs"
    configs.mkdir()
    (configs / "mini.yaml").write_text(
        "name: mini\nkind: theory_mc\nfixed: {seed: 1, samples: 1000, chunks: 1, M: 2}\n"
        "grid: {N: [1, 2]}\nscales: {quick: {}, paper: {}}\n"
    )
    pub = tmp_path / "pub" / "cartpole"  # published runs: lines of their own after the report
    finished_run(pub / "dqn", [(0, 1000, -1.0, 5)], steps=1000, train={0: (1000, 1.0)},
                 tests={0: 1.0})  # fmt: skip
    out = tmp_path / "out"
    helpers.register()
    try:
        argv = ["reproduce", "--out", str(out), "--configs", str(configs), "--only", "mini"]
        argv += ["--published", str(tmp_path / "pub"), "--workers", "1", "--no-progress"]
        assert main(argv) == 0
    finally:
        helpers.unregister()
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("report: "))
    assert lines[at].startswith(f"report: {out / 'report.html'}  (")
    assert lines[at + 1] == f"        {out / 'report.md'}"  # it came after the published lines
    assert any("published (not re-run, no claims)" in line for line in lines[at + 2 :])
    meta = json.loads((out / "reproduce.json").read_text())
    total = re.fullmatch(r"total (\d+\.\d) min \((\d+\.\d) min before the report, as the report "
                         r"says\)", lines[-1])  # fmt: skip
    assert total is not None, lines[-1]
    assert total[1] == f"{meta['seconds_with_report'] / 60:.1f}"
    assert total[2] == f"{meta['seconds'] / 60:.1f}"
    assert f"Total wall time: {total[2]} min" in (out / "report.md").read_text()
