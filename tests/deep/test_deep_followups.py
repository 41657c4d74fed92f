"""Second reading of session 23's deep changes (hL2): the long run's size warnings, the
progress line of ``maxminq status`` and ``TrainConfig``'s repr."""

from __future__ import annotations

import collections
import pathlib
import re
import warnings

import pytest

from maxminq.deep import train as train_module
from maxminq.deep.config import TrainConfig


def _disk(free: int) -> object:
    usage = collections.namedtuple("usage", "total used free")
    return lambda path: usage(10 * free, 9 * free, free)


def test_disk_warning_names_the_checkpoint_the_full_buffers_reach(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Checkpoints every 100 steps, buffers of 1,000 rows: the first checkpoints hold a tenth
    # of the buffers and fit; the one at step 1,000 holds them whole. The warning said the
    # run would stop at its first checkpoint (step 100).
    cfg = TrainConfig(
        env_id="CartPole-v1", steps=5_000, buffer_size=1_000, checkpoint_every=100
    ).resolve()
    monkeypatch.setattr(train_module, "free_memory", lambda: None)
    monkeypatch.setattr(train_module.shutil, "disk_usage", _disk(500_000))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        train_module.warn_about_size(cfg, 1_000_000, tmp_path / "out")
    said = [str(w.message) for w in caught if w.category is train_module.RunSizeWarning]
    assert len(said) == 1
    assert "by step 1,000" in said[0]
    assert "step 100)" not in said[0] and "first checkpoint" not in said[0]


def test_repr_of_a_config_with_an_own_operator_function_reads_back_as_the_same_run() -> None:
    # The library's own maxmin G, given as a function (its reference: a name of OPERATORS); the
    # repr wrote <function ... at 0x...>, which Python cannot read back.
    from maxminq import operators

    g = operators.load_operator("maxmin")
    assert callable(g)
    cfg = TrainConfig(
        env_id="CartPole-v1", agent="generalized-dqn", operator=g, steps=300, seeds=(0, 1)
    )
    text = repr(cfg)
    assert "<function" not in text and "operator='maxmin'" in text
    back = eval(text, {"TrainConfig": TrainConfig})  # noqa: S307 - the repr's own promise
    assert back.resolve() == cfg.resolve()


def test_a_resumed_run_reports_its_checkpoints_step_before_its_first_interval(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Killed at step 330 after its checkpoint at 250: its progress.json said step 330 and a
    # time left of then; resumed, 'maxminq status' read that until the first report of the
    # resumed run, 0.5% of its steps later (minutes on a long run).
    import json

    from maxminq._progress import describe_progress

    cfg = TrainConfig(
        env_id="CartPole-v1", agent="dqn", steps=400, seeds=[0], buffer_size=100,
        learning_starts=50, batch_size=8, eval_episodes=0, checkpoint_every=0,
    )  # fmt: skip
    out = tmp_path / "run"
    assert train_module.run_training(cfg, out, stop_after=250, progress=False) == {}
    stale = {"step": 330, "steps": 400, "steps_per_s": 40.0, "seconds_left": 1.75}
    (out / "progress.json").write_text(json.dumps({**stale, "updated": 1.7e9}))
    seen: list[str | None] = []
    step = train_module.Trainer.train_step

    def first_step(self: train_module.Trainer) -> None:
        if not seen:
            seen.append(describe_progress(out))
        step(self)

    monkeypatch.setattr(train_module.Trainer, "train_step", first_step)
    train_module.run_training(cfg, out, progress=False)
    assert len(seen) == 1 and seen[0] is not None
    assert seen[0].startswith("step 250 of 400 (62%)")
    assert "steps/s" not in seen[0] and "left" not in seen[0]


def test_the_time_left_of_a_report_not_from_today_says_its_date(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A run training still (a laptop asleep since) whose last report is of 2023-11-14 said
    # 'about 1 min left as of 23:13 CET', read as today's.
    import json
    import time

    from maxminq._progress import describe_progress

    monkeypatch.setenv("TZ", "Europe/Paris")
    time.tzset()
    try:
        report = {"step": 10, "steps": 20, "steps_per_s": 1.0, "seconds_left": 60.0}
        (tmp_path / "progress.json").write_text(json.dumps({**report, "updated": 1.7e9}))
        said = describe_progress(tmp_path)
        now = dict(report, updated=time.time())
        (tmp_path / "progress.json").write_text(json.dumps(now))
        today = describe_progress(tmp_path)
    finally:
        monkeypatch.undo()  # TZ as it was, and the clock's zone with it
        time.tzset()
    assert said == "step 10 of 20 (50%), 1 steps/s, about 1 min left as of 2023-11-14 23:13 CET"
    # today's says the time only ('as of 20:12 CET' at 8 pm: no date, whatever the hour)
    assert today is not None and re.search(r" as of \d\d:\d\d CES?T$", today), today


def test_the_start_line_of_a_run_checkpointed_before_its_buffers_fill() -> None:
    # Checkpoints every 10,000 steps of buffers of 100,000: the first nine hold less than
    # the full buffers; the line said each held 'at least' their full size.
    cfg = TrainConfig(
        env_id="CartPole-v1", steps=200_000, buffer_size=100_000, checkpoint_every=10_000
    ).resolve()
    line = train_module.long_run_note(cfg, 4_800_000, pathlib.Path("runs/cp"))
    assert "holds them: once they are full, at least 4.8 MB in runs/cp/checkpoint" in line


def test_a_finished_run_read_back_is_no_run_short_of_memory(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # run_training of a finished run reads its tables back: it fills no buffer and writes no
    # checkpoint, but warned that it 'may be killed for want of memory' when memory was low.
    cfg = TrainConfig(
        env_id="CartPole-v1", agent="dqn", steps=60, seeds=[0], buffer_size=50,
        learning_starts=20, batch_size=8, eval_episodes=0, checkpoint_every=0,
    )  # fmt: skip
    out = tmp_path / "run"
    train_module.run_training(cfg, out, progress=False)
    monkeypatch.setattr(train_module, "free_memory", lambda: 1.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tables = train_module.run_training(cfg, out, progress=False)
    assert set(tables) >= {"episodes", "tests"}  # read back
    assert [w for w in caught if w.category is train_module.RunSizeWarning] == []
    with warnings.catch_warnings(record=True) as caught:  # a run trained still warns
        warnings.simplefilter("always")
        train_module.run_training(cfg, tmp_path / "new", progress=False)
    said = [w for w in caught if w.category is train_module.RunSizeWarning]
    assert len(said) == 1 and said[0].filename == __file__  # at the caller's line


def test_a_run_nearly_done_is_not_said_done(tmp_path: pathlib.Path) -> None:
    # 'step 4,980,000 of 5,000,000 (100%)' of a run with 20,000 steps to go (rounded).
    import json

    from maxminq._progress import describe_progress

    (tmp_path / "progress.json").write_text(json.dumps({"step": 4_980_000, "steps": 5_000_000}))
    assert describe_progress(tmp_path) == "step 4,980,000 of 5,000,000 (99%)"
