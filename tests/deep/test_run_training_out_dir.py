"""``run_training``'s folder is checked as the command's ``--out``: ``''`` (an empty
variable, say) trained and wrote the run's tables, model and checkpoint into the current
folder, where ``maxminq train --out ''`` and ``load_agent('')`` refuse it; None was
Python's TypeError from pathlib. Both are one-line UsageErrors naming --out, before
anything is written; ``"."`` still means the current folder."""

from __future__ import annotations

import pytest
from deep_runs import TINY

from maxminq.deep import TrainConfig, run_training
from maxminq.errors import UsageError


@pytest.mark.parametrize(
    ("out", "said"),
    [
        ("", "--out: expected a path, got an empty string"),
        (None, "--out: expected a path (a str or pathlib.Path), got None"),
        (b"run", "--out: expected a path (a str or pathlib.Path), got b'run'"),
    ],
)
def test_an_empty_or_no_out_dir_is_refused_before_anything_is_written(
    tmp_path, monkeypatch, out, said
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError) as info:
        run_training(TrainConfig(**TINY), out, progress=False)
    assert str(info.value) == said
    assert list(tmp_path.iterdir()) == []


def test_the_current_folder_given_as_a_dot_still_takes_the_run(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    run_training(TrainConfig(**{**TINY, "eval_episodes": 0}), ".", progress=False)
    assert (tmp_path / "runs.csv").is_file() and (tmp_path / "model.pt").is_file()
