"""Robustness of ``maxminq train`` / ``run_training`` and ``maxminq evaluate`` against what
happens to real runs: a process killed (SIGKILL) while it writes a checkpoint or its final
tables, a full disk, a damaged or foreign checkpoint, model or ``config.json``, and a seed
that diverges in a run that is interrupted and resumed. Kills and file-size limits act on
real ``maxminq train`` subprocesses; the rest calls the command in-process."""

from __future__ import annotations

import dataclasses
import os
import pathlib
import pickle
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest
import sweep_kinds as helpers
import torch
from helpers import rerun_while_late

from maxminq.cli import main
from maxminq.deep.config import TrainConfig
from maxminq.deep.policy import state_digest, torch_save
from maxminq.deep.run_folder import clear_run, read_tables
from maxminq.deep.train import run_training
from maxminq.errors import CannotResumeError, UsageError
from maxminq.experiments.registry import execute_deep

# A tiny CartPole run: 240 steps, a checkpoint every 40, learning after 40.
ARGV, _KW = helpers.tiny_train(240, bias_every=60)


_same_tables = helpers.same_tables


def _config(steps: int = 240) -> TrainConfig:
    """The run ``ARGV`` trains, as a TrainConfig (``steps`` changed: extended)."""
    return TrainConfig(**{**_KW, "steps": steps})


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> tuple[pathlib.Path, dict]:
    """A finished run of ``ARGV`` (tables, model, final checkpoint) and its tables as read
    back: what every uninterrupted run of ``ARGV`` must give."""
    out = tmp_path_factory.mktemp("finished") / "run"
    with torch.random.fork_rng():
        run_training(_config(), out, resume=False, progress=False)
    return out, read_tables(out)


def _copy(run: pathlib.Path, tmp_path: pathlib.Path) -> pathlib.Path:
    out = tmp_path / "copy"
    shutil.copytree(run, out)
    return out


def _one_line_error(capsys: pytest.CaptureFixture[str], *needles: str) -> str:
    """The command's stderr, checked to be one line naming each of ``needles``."""
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "Traceback" not in err and all(n in err for n in needles), err
    return err


def _spawn(out: pathlib.Path, *extra: str, fsize: int | None = None) -> subprocess.Popen:
    """``maxminq train`` of ``ARGV`` into ``out`` as a subprocess (a file-size limit of
    ``fsize`` bytes: a full disk for every file it writes)."""

    def limit() -> None:
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    code = "import sys; from maxminq.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.Popen(
        [sys.executable, "-c", code, *ARGV, "--out", str(out), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=limit,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )


def _kill_when(proc: subprocess.Popen, ready, timeout: float = 120.0) -> bool:
    """SIGKILL ``proc`` as soon as ``ready()`` holds (polled); False if it ended first."""
    end = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < end:
        if ready():
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            return True
        time.sleep(0.002)
    proc.wait(timeout=timeout)
    return False


@pytest.mark.parametrize("damage", ["truncated", "foreign", "older", "flipped"])
def test_a_damaged_or_foreign_checkpoint_is_one_line_and_keeps_the_run(
    finished, tmp_path, capsys, damage: str
) -> None:
    """A checkpoint cut short (a copy that did not finish), one that is not a checkpoint,
    and one of an older layout (a key missing) were tracebacks on --resume; one byte
    flipped inside its networks (torch.load checks no checksum) extended the run silently
    from other weights. Now one line naming the file, exit 2, and a finished run it was to
    extend keeps its tables and model."""
    out = _copy(finished[0], tmp_path)
    ckpt = out / "checkpoint" / "state.pt"
    if damage == "truncated":
        os.truncate(ckpt, ckpt.stat().st_size // 2)
    elif damage == "foreign":
        torch.save({"weights": torch.zeros(3)}, ckpt)
    elif damage == "flipped":  # still a torch file that loads, with other numbers
        data = bytearray(ckpt.read_bytes())
        weights = torch.load(ckpt, weights_only=True)["learner"]["online"].numpy().tobytes()
        at = data.find(weights[:64])
        assert at > 0
        data[at + len(weights) // 2] ^= 0x40
        ckpt.write_bytes(bytes(data))
        torch.load(ckpt, weights_only=True)  # loads: only a checksum can tell
    else:  # an older layout with a valid checksum: only the missing key can tell
        state = torch.load(ckpt, weights_only=True)
        del state["uniforms_pos"]
        state["sha256"] = state_digest({k: v for k, v in state.items() if k != "sha256"})
        torch_save(state, ckpt)
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    extend = [a if a != "240" else "280" for a in ARGV]  # --steps 280: extends the run
    assert main([*extend, "--out", str(out), "--resume"]) == 2
    err = _one_line_error(capsys, "--resume", str(ckpt), "damaged", "--overwrite")
    assert damage != "flipped" or "checksum" in err, err
    assert damage != "older" or ("uniforms_pos" in err and "checksum" not in err), err
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before


def test_a_sweep_run_with_a_damaged_checkpoint_says_to_delete_its_work_folder(
    finished, tmp_path
) -> None:
    """In a sweep, a deep run whose checkpoint is damaged failed on every resume with
    train's advice, '--overwrite', an option ``maxminq sweep`` does not have. Its error now
    names the work folder to delete, and survives pickling (workers send errors back)."""
    work = _copy(finished[0], tmp_path)
    ckpt = work / "checkpoint" / "state.pt"
    os.truncate(ckpt, ckpt.stat().st_size // 2)
    settings = dataclasses.asdict(_config(steps=280))  # extends the run: reads the checkpoint
    with pytest.raises(CannotResumeError) as caught:
        execute_deep(settings, work, progress=False)
    text = str(caught.value)
    assert str(ckpt) in text and "damaged" in text, text
    assert f"delete {work} and run the sweep again" in text and "--overwrite" not in text, text
    assert str(pickle.loads(pickle.dumps(caught.value))) == text
    assert ckpt.exists()  # nothing deleted for the user


def test_a_checkpoint_without_a_checksum_resumes_with_a_one_line_warning(
    finished, tmp_path, capsys
) -> None:
    """A checkpoint written before checkpoints carried a SHA-256 (an older maxminq, a run
    under way across an upgrade) cannot be checked: it is resumed, not refused (the run
    would be lost), after one warning line naming it; the resumed run equals the
    uninterrupted one."""
    out = tmp_path / "old"
    with torch.random.fork_rng():
        run_training(_config(), out, resume=False, progress=False, stop_after=120)
    ckpt = out / "checkpoint" / "state.pt"
    state = torch.load(ckpt, weights_only=True)
    state.pop("sha256", None)
    torch_save(state, ckpt)
    assert main([*ARGV, "--out", str(out), "--resume"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith(f"maxminq train: warning: {ckpt} has no checksum"), err
    _same_tables(read_tables(out), finished[1])


def test_a_damaged_config_json_of_a_finished_run_is_one_line(finished, tmp_path, capsys):
    """A finished run's config.json edited into invalid JSON, or without its options, made
    --resume a traceback (JSONDecodeError, KeyError). Now one line naming the file."""
    out = _copy(finished[0], tmp_path)
    for text in ("{bad", '{"lr": 0.001}', "[1, 2]"):
        (out / "config.json").write_text(text)
        assert main([*ARGV, "--out", str(out), "--resume"]) == 2
        _one_line_error(capsys, str(out / "config.json"))
        assert (out / "runs.csv").exists() and (out / "model.pt").exists()


@pytest.mark.parametrize("damage", ["truncated", "not_a_model", "garbage", "flipped"])
def test_evaluate_a_damaged_model_is_one_line_exit_2(finished, tmp_path, capsys, damage):
    """model.pt cut short, a torch file that is no model of maxminq's, or bytes that are no
    torch file were tracebacks in ``maxminq evaluate``; a byte flipped inside its weights
    played (and printed the returns of) other networks. Now one line naming model.pt."""
    out = _copy(finished[0], tmp_path)
    model = out / "model.pt"
    if damage == "truncated":
        os.truncate(model, model.stat().st_size - 100)
    elif damage == "not_a_model":
        torch.save({"format": 1, "config": "{}"}, model)
    elif damage == "garbage":
        model.write_bytes(b"not a torch archive\n" * 50)
    else:  # one byte inside the networks' weights (torch.load checks no checksum)
        data = bytearray(model.read_bytes())
        weights = torch.load(model, weights_only=True)["online"].numpy().tobytes()
        at = data.find(weights[:64])
        assert at > 0  # the weights' bytes were found: the flip lands inside them
        data[at + len(weights) // 2] ^= 0x40
        model.write_bytes(bytes(data))
    assert main(["evaluate", str(out), "--episodes", "1", "--no-progress"]) == 2
    _one_line_error(capsys, "RUN_DIR", str(model))


@pytest.mark.parametrize("moment", ["checkpoint", "tables"])
def test_sigkill_while_writing_then_resume_gives_the_uninterrupted_run(
    finished, tmp_path, capsys, moment: str
) -> None:
    """SIGKILL while a checkpoint (after the first) is being written, or while the final
    tables are: no table set looks finished (runs.csv is absent or every table is whole),
    and --resume gives bitwise the tables of the uninterrupted run."""
    out = tmp_path / "killed"
    proc = _spawn(out)
    ckpt_dir = out / "checkpoint"
    if moment == "checkpoint":  # a later checkpoint's temporary beside an earlier one

        def ready() -> bool:
            return (ckpt_dir / "state.pt").exists() and any(ckpt_dir.glob(".state.pt.*.tmp"))

    else:  # the first final table (episodes.csv) in place: the others may be under way

        def ready() -> bool:
            return (out / "episodes.csv").exists()

    killed = _kill_when(proc, ready)
    assert killed, proc.stderr.read() if proc.stderr else ""
    if (out / "runs.csv").exists():  # marks a finished run: every table is there, whole
        _same_tables(read_tables(out), finished[1])  # not merely readable (a cut CSV reads)
    assert main([*ARGV, "--out", str(out), "--resume"]) == 0
    capsys.readouterr()
    _same_tables(read_tables(out), finished[1])
    assert not list(out.rglob("*.tmp"))


@pytest.mark.parametrize(("fsize", "name"), [(60_000, "checkpoint/state.pt"), (100, "config.json")])
def test_a_full_disk_is_one_line_naming_the_file(tmp_path, fsize: int, name: str) -> None:
    """A file-size limit (a full disk) below a checkpoint's size made torch.save's
    RuntimeError ('unexpected pos') a traceback; below config.json's, the one line named no
    file ('File too large'). Now one line naming the file and the system's reason, exit 1,
    and nothing that looks like a checkpoint or a finished run."""
    out = tmp_path / "full"
    proc = _spawn(out, fsize=fsize)  # a checkpoint is ~300 kB, config.json ~600 B
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert f"{out / name}: " in lines[0] and "too large" in lines[0], err
    assert not (out / "checkpoint" / "state.pt").exists() and not (out / "runs.csv").exists()
    assert not list(out.rglob("*.tmp"))


def test_a_diverged_seed_resumes_to_the_uninterrupted_run_and_leaves_the_other_alone(
    tmp_path,
) -> None:
    """Step size 60 without gradient clipping: seed 2's values blow up (NaN/inf) as soon
    as it learns, seed 0's do not. Stopped after the divergence and resumed, the run gives
    the uninterrupted one's tables (seed 2 recorded as diverged at the same step), and seed
    0's rows are those of seed 0 trained alone."""

    def config(seeds: list[int]) -> TrainConfig:
        return TrainConfig(
            env_id="CartPole-v1",
            agent="dqn",
            n=1,
            lr=60.0,
            grad_clip=0,
            steps=200,
            seeds=seeds,
            eval_episodes=1,
            learning_starts=50,
            checkpoint_every=100,
            buffer_size=200,
            target_update=50,
            bias_every=100,
        )

    full = run_training(config([0, 2]), tmp_path / "full", resume=False, progress=False)
    runs = full["runs"].set_index("seed")
    assert runs.loc[2, "status"] == "diverged" and 50 < runs.loc[2, "diverged_step"] < 100
    assert runs.loc[0, "status"] == "done"
    out = tmp_path / "stopped"
    assert run_training(config([0, 2]), out, resume=False, progress=False, stop_after=150) == {}
    _same_tables(run_training(config([0, 2]), out, progress=False), full)
    alone = run_training(config([0]), tmp_path / "alone", resume=False, progress=False)
    seed0 = {k: v[v["seed"] == 0] for k, v in full.items()}
    _same_tables(seed0, alone)


def test_a_finished_run_is_not_shortened_from_an_older_checkpoint(tmp_path) -> None:
    """A run resumed with --checkpoint-every 0 finishes without a final checkpoint, so its
    folder keeps an older one (step 250 of 300). --resume --steps 270 continued that one and
    replaced the finished 300-step run by a 270-step run, where only --steps may grow. Now
    refused, naming --steps, and the finished run is kept."""
    base = dict(env_id="CartPole-v1", agent="dqn", n=1, lr=1e-3, seeds=[0], eval_episodes=1)
    base |= dict(learning_starts=50, buffer_size=200, target_update=50, bias_every=100)
    out = tmp_path / "run"
    ckpt = TrainConfig(steps=300, checkpoint_every=100, **base)
    assert run_training(ckpt, out, progress=False, stop_after=250) == {}
    run_training(TrainConfig(steps=300, checkpoint_every=0, **base), out, progress=False)
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    assert torch.load(out / "checkpoint" / "state.pt", weights_only=True)["step"] == 250
    with pytest.raises(UsageError, match=r"^--steps: .*300"):
        run_training(TrainConfig(steps=270, checkpoint_every=0, **base), out, progress=False)
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before


def test_a_checkpoint_folder_without_a_checkpoint_holds_no_run(tmp_path, capsys) -> None:
    """Ctrl-C or a kill during the first checkpoint's write leaves checkpoint/ without
    state.pt (a kill: with its temporary). Ctrl-C then says --resume would start again, but
    the same command without --resume was refused: '--out holds a run already; add --resume
    to continue it'. Now it trains there, and leaves no temporary behind."""
    out = tmp_path / "run"
    (out / "checkpoint").mkdir(parents=True)
    (out / "checkpoint" / ".state.pt.x1y2.tmp").write_bytes(b"PK\x03\x04 cut")
    (out / "config.json").write_text("{}")
    short = [a if a != "240" else "60" for a in ARGV]
    assert main([*short, "--out", str(out)]) == 0, capsys.readouterr().err
    assert "holds a run" not in capsys.readouterr().err
    assert (out / "runs.csv").exists() and (out / "checkpoint" / "state.pt").exists()
    assert not list(out.rglob("*.tmp"))


@pytest.mark.parametrize("moment", ["start", "mid", "end"])
def test_ctrl_c_says_the_truth_and_resume_gives_the_uninterrupted_run(
    finished, tmp_path, capsys, moment: str
) -> None:
    """SIGINT to a real run as it starts (config.json written), after a checkpoint (step
    100 reported), and once its steps are done (the test episodes or the tables): exit 130
    with a message that matches the disk (it promises a continuation exactly when
    checkpoint/state.pt is there), and --resume then gives the uninterrupted run."""
    out = tmp_path / "interrupted"
    ready = {
        "start": lambda: (out / "config.json").exists(),
        "mid": lambda: helpers.progress_step(out) >= 100,
        "end": lambda: helpers.progress_step(out) == 240,
    }[moment]
    # Step 100 to the end takes about a second here: a loaded machine that does not run this
    # process for that long lets a "start" or "mid" run finish (exit 0) before the SIGINT.
    # Such a run tests nothing of its moment: it is removed and run again (at most 3 runs).

    def interrupt_when_ready() -> tuple[int, str]:
        proc = _spawn(out)
        end = time.monotonic() + 120
        while proc.poll() is None and not ready() and time.monotonic() < end:
            time.sleep(0.002)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        return proc.returncode, err

    status, err = rerun_while_late(
        interrupt_when_ready,
        lambda run: run[0] == 0 and moment != "end",
        lambda: shutil.rmtree(out),
    )
    if status == 130:
        has_checkpoint = (out / "checkpoint" / "state.pt").exists()
        assert "Traceback" not in err, err
        if has_checkpoint:
            assert "the same command with --resume continues from it" in err, err
        else:
            assert "no checkpoint was written yet (every 40 steps)" in err, err
        assert moment != "end" or has_checkpoint  # the last checkpoint precedes the tests
    else:  # the signal came after the run: it is finished
        assert status == 0 and moment == "end", err
    assert main([*ARGV, "--out", str(out), "--resume"]) == 0
    capsys.readouterr()
    _same_tables(read_tables(out), finished[1])


def test_ctrl_c_while_a_checkpoint_is_written_stays_a_ctrl_c(tmp_path) -> None:
    """torch.save turns an exception raised in the file's write() into a RuntimeError
    ('unexpected pos'): a Ctrl-C arriving while a checkpoint or model.pt was written (the
    last checkpoint comes right before the test episodes) ended 'maxminq train' with a
    traceback, exit 1, instead of exit 130 and what --resume will do. The write here goes
    to a pipe whose reader sends SIGINT to the writing thread while it waits."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    writer = threading.get_ident()
    got = []

    def read() -> None:
        with open(fifo, "rb") as f:
            got.append(f.read(65536))
            time.sleep(0.2)  # the writer is blocked on the full pipe by now
            signal.pthread_kill(writer, signal.SIGINT)
            while f.read(1 << 20):
                pass

    reader = threading.Thread(target=read)
    reader.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            torch_save({"weights": torch.zeros(4_000_000)}, fifo)
    finally:
        reader.join(timeout=30)
    assert got and len(got[0]) == 65536


def test_a_clear_cut_short_leaves_no_finished_run_with_a_table_missing(finished, tmp_path):
    """--overwrite deletes the run's files (clear_run) in turn, runs.csv after the other
    tables: cut short after episodes.csv (a kill; here a deletion that fails), the folder
    still looked finished, with a table missing. Now runs.csv goes first."""
    out = _copy(finished[0], tmp_path)
    (out / "episodes.csv").unlink()
    (out / "episodes.csv").mkdir()  # cannot be unlinked: the clear stops there
    (out / "episodes.csv" / "keep").write_text("x")
    with pytest.raises(OSError):
        clear_run(out)
    assert not (out / "runs.csv").exists()
