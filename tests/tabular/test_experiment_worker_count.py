"""The summary line of ``maxminq experiment`` names the processes that ran the settings.

With ``--workers 3`` and one setting the command runs it in its own process, yet the line
read ``(3 worker(s))``: a researcher comparing wall times across machines took it for a
three-process run. The command never runs more processes than settings (tasks).
"""

from __future__ import annotations

import pytest

from maxminq.cli import main

TOY = ["experiment", "toy-mdp", "--runs", "2", "--episodes", "2", "--mu", "0.1",
       "--algorithms", "q_learning", "--workers", "3", "--no-progress"]  # fmt: skip

MC = ["experiment", "mountain-car", "--runs", "1", "--episodes", "1", "--max-steps", "30",
      "--sigma2", "10", "--step-sizes", "0.1", "--algorithms", "q_learning", "--workers", "3",
      "--no-progress"]  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "line"),
    [(TOY, "toy MDP: 1 setting (q_learning)"), (MC, "mountain car: 1 algorithm x 1 sigma2")],
)
def test_summary_names_the_one_process_that_ran_a_single_setting(
    tmp_path, capsys, argv: list[str], line: str
) -> None:
    assert main([*argv, "--out", str(tmp_path)]) == 0
    (summary,) = [t for t in capsys.readouterr().out.splitlines() if t.startswith(line)]
    assert "(1 worker(s))" in summary, summary
    assert "3 worker" not in summary
