"""Tiny deep training runs shared by the deep tests (configs, a run killed and resumed,
run folders)."""

from __future__ import annotations

import pathlib
import struct
from pathlib import Path

import pandas as pd
from run_folders import finished_run

from maxminq.deep import TrainConfig, run_training


def _cfg(**kw) -> TrainConfig:
    """Three seeds of a tiny Maxmin DQN on CartPole, with evaluations during training whose
    episodes are cut at 12 steps (some end, some are cut)."""
    base = dict(
        env_id="CartPole-v1",
        agent="maxmin-dqn",
        n=2,
        seeds=[0, 1, 2],
        steps=160,
        learning_starts=40,
        bias_every=40,
        target_update=40,
        hidden=8,
        eval_episodes=2,
        eval_every=60,
        eval_every_episodes=2,
        max_episode_steps=12,
        checkpoint_every=0,
    )
    base.update(kw)
    return TrainConfig(**base)


def _small(**kw) -> TrainConfig:
    base = dict(
        env_id="CartPole-v1",
        agent="maxmin-dqn",
        n=2,
        lr=1e-3,
        steps=400,
        seeds=[0],
        eval_episodes=2,
        bias_every=100,
        bias_probe_every=5,
        learning_starts=100,
        checkpoint_every=0,
        target_update=50,
        buffer_size=300,
    )
    base.update(kw)
    return TrainConfig(**base)


def _deterministic(tables: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    out = dict(tables)
    out["metrics"] = tables["metrics"].drop(columns=["steps_per_s"])  # wall-clock
    return out


def _tensorboard_events(folder: pathlib.Path) -> list[list[tuple[str, float, int]]]:
    """The scalars of each event file in ``folder`` (in name order, as TensorBoard reads
    them), read with tensorboardX's own Event protobuf from the TFRecord framing (length,
    its CRC, data, its CRC); a writer's purge_step is its file's SessionLog START event,
    kept as ("START", 0.0, step). Wall-clock steps_per_s is left out."""
    from tensorboardX.proto.event_pb2 import Event, SessionLog

    files = []
    for path in sorted(folder.glob("events.out.tfevents.*")):
        data, pos, scalars = path.read_bytes(), 0, []
        while pos < len(data):
            (length,) = struct.unpack_from("<Q", data, pos)
            event = Event.FromString(data[pos + 12 : pos + 12 + length])
            pos += 12 + length + 4
            if event.session_log.status == SessionLog.START:
                scalars.append(("START", 0.0, event.step))
            for v in event.summary.value:
                if not v.tag.endswith("steps_per_s"):
                    scalars.append((v.tag, v.simple_value, event.step))
        files.append(scalars)
    return files


def _shown(folder: pathlib.Path) -> list[tuple[str, float, int]]:
    """What TensorBoard shows of a run's logs: a file's START event at step k hides the
    earlier files' scalars from step k on."""
    shown: list[tuple[str, float, int]] = []
    for scalars in _tensorboard_events(folder):
        for tag, value, step in scalars:
            if tag == "START":
                shown = [e for e in shown if e[2] < step]
            else:
                shown.append((tag, value, step))
    return sorted(shown)


def train_killed_at_330_then_resumed(cfg: TrainConfig, out: pathlib.Path) -> None:
    """Train ``cfg`` in ``out`` as a run killed at step 330, its last checkpoint at 200, and
    then resumed to the end (``cfg.checkpoint_every`` must be 100)."""
    assert run_training(cfg, out, progress=False, stop_after=200) == {}
    ckpt = out / "checkpoint" / "state.pt"
    at_200 = ckpt.read_bytes()
    assert run_training(cfg, out, progress=False, stop_after=330) == {}
    ckpt.write_bytes(at_200)
    run_training(cfg, out, progress=False)


TINY = dict(
    env_id="CartPole-v1",
    steps=200,
    learning_starts=100,
    eval_episodes=1,
    checkpoint_every=0,
    bias_every=100,
    buffer_size=200,
)


def _run(folder: Path) -> Path:
    return finished_run(folder, [(0, 1000, -1.0, 5)], steps=1000,
                        train={0: (1000, 1.0)}, tests={0: 1.0})  # fmt: skip
