"""Training loop for the DQN family: S seeds x N members in one process, resumable.

``run_training(config, out_dir)`` trains every seed of ``config.seeds`` side by side
(one environment, one replay buffer and one random stream per seed; one stacked model
for all networks), then runs the paper's test protocol (``eval_episodes`` episodes with
eps = ``eval_eps``, Lan et al. 2020, section 5) and writes four tidy tables as CSV (and
``probes`` with ``save_probes``, ``evals`` with ``eval_every``):

* ``episodes``: seed, episode, step, return, length, return_avg100, terminated, truncated
* ``tests``: seed, episode, return, length, terminated, truncated (how each test episode
  ended, as ``maxminq evaluate`` says it; runs written before 2026-11-24, the published
  ones among them, have neither column)
* ``metrics``: seed, step, loss, q_mean, bias_mean, bias_std, bias_abs, bias_n, epsilon,
  steps_per_s (one row per seed every ``bias_every`` steps, and one for a last partial
  interval)
* ``runs``: seed, status ('done' or 'diverged'), diverged_step, diverged_cause (one line:
  ``G ... gave inf on finite target-net values in [lo, hi] ...`` or ``networks: ...``;
  ``CAUSE_NOT_RECORDED`` for a seed diverged in an older checkpoint the run resumed from)
* ``probes`` (only with ``save_probes``): seed, episode, step, episode_step, end_step,
  terminated, estimate, return, bias: one row per scored probe (those ``metrics``
  aggregates; a seed that diverged has no row there for its last interval), taken after
  ``step`` steps of the run (a multiple of ``bias_probe_every``) and ``episode_step`` of
  its episode, which ended at ``end_step`` (its ``step`` in ``episodes``), so
  ``end_step - step`` steps after the probe
* ``evals`` (only with ``eval_every`` > 0, beyond the paper's protocol): seed, step,
  episode, return, length, terminated, truncated (empty in the rows of a checkpoint written
  before 2026-11-24 that a run resumed from; such a run's finished table has neither
  column): every ``eval_every`` steps, ``eval_every_episodes`` episodes per
  live seed with eps = ``eval_eps``, on environments of their own and with a random stream
  of their own (the seed's fourth), so that training goes on exactly as without them (a
  seed whose values are not finite there, which cannot act, is diverged at that step)

Estimation bias (the paper's subject): every ``bias_probe_every`` steps the visited
(s, a) of each seed is probed with the estimate its target side uses (min over the N
target nets for Maxmin, see ``Learner.estimate``); when that episode ends, the
discounted return actually obtained from the probe onwards is computed, and
``bias = estimate - return`` is summarised per metrics interval. Probes in an episode
cut by the time limit are kept only if the missing tail weighs at most
``gamma^k <= BIAS_TAIL`` (k = steps from the probe to the cut); the ``probes`` table
keeps exactly these, and only these (a dropped probe's return lacks a tail that may be
most of it, so its difference is no bias). Where a cut episode's probes never count (a cap
under ``bias_horizon(gamma)``) and cut episodes hold much of the run, a
``CutEpisodesWarning`` says so, during training when it is sure and at the end
(``deep.bias_probes.CutEpisodesCheck``).

Checkpoints (``out_dir/checkpoint/state.pt``, written atomically every
``checkpoint_every`` steps with a SHA-256 of their contents inside, checked when loaded
with ``torch.load(weights_only=True)``: see ``deep.run_folder._read_checkpoint``) hold the
networks, optimiser states, replay buffers, counters, RNG states and, per seed, the
current episode's reset seed and actions: on resume each environment is reset with that
seed and the actions are replayed, which restores its exact state, so a killed run
resumes to the same result as an uninterrupted one. Ctrl-C and SIGTERM during training
take effect at the end of the step under way (``deep.step_boundary``), after a checkpoint of
that step (unless ``checkpoint_every`` is 0), so a stopped run loses no step. A finished
run also writes ``model.pt``: the final online networks, loaded by
``maxminq.deep.policy.load_agent``. And ``software.json``: what the run was computed with, per
stretch of steps (``Trainer.note_software``: the versions and torch's thread count), the
same tables being promised only under the same ones.

Beside this module: ``deep.run_folder`` (the tables' columns, reading a run back, the
checkpoint's checks, the folder's lock), ``deep.env_checks`` (the environment's checks and
warnings) and ``deep.bias_probes`` (which probes count).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import pathlib
import shlex
import shutil
import time
import warnings
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
import pandas as pd
import torch

from maxminq._progress import progress_bar
from maxminq.analysis.style import count
from maxminq.deep.agents import Learner, ValuesNotFinite, check_operator, policy_action
from maxminq.deep.bias_probes import (
    CutEpisodesCheck,
    _discounted_returns,
    bias_horizon,
    probe_counts,
)
from maxminq.deep.config import (
    BIAS_TAIL,
    EnvIdWarning,
    TrainConfig,
    env_id_elsewhere,
    start_env_id_check,
    warn_about_steps,
)
from maxminq.deep.env_checks import (
    _check_api,
    _cross_episode_wrappers,
    _observation,
    _observations,
    _warn_about_env,
    check_action_space,
    episode_observation,
    warn_if_no_time_limit,
    warn_if_normalized,
    warn_if_not_repeatable,
)
from maxminq.deep.policy import (
    MODEL_FILE,
    RESTORE_ERRORS,
    save_model,
    state_digest,
    torch_save,
    torch_threads,
)
from maxminq.deep.replay import ReplayBuffers
from maxminq.deep.run_folder import (
    _CKPT,
    FIGURE_FILES,
    OPTIONAL_TABLES,
    RUN_FILES,
    SOFTWARE_FILE,
    TABLE_COLUMNS,
    CheckpointWarning,
    ProgressReport,
    _damaged_checkpoint,
    _read_checkpoint,
    _read_options,
    _remove_stale_temporaries,
    check_resumable,
    clear_run,
    folder_lock,
    read_tables,
    same_options,
)
from maxminq.deep.step_boundary import StepBoundary
from maxminq.envs.registry import space_text
from maxminq.errors import CannotResumeError, MaxminqWarning, UsageError, is_whole
from maxminq.experiments.store import (
    PROGRESS_FILE,
    atomic_write,
    atomic_write_bytes,
)

if TYPE_CHECKING:
    from maxminq.analysis.tables import pooled_bias as pooled_bias
    from maxminq.deep.config import ResolvedTrainConfig
else:  # hidden from type checkers: a module __getattr__ (-> Any) would make every name
    # a checker does not find here Any (a misspelt import passed mypy)

    def __getattr__(name: str) -> Any:
        """``pooled_bias``, re-exported from :mod:`maxminq.analysis.tables` on first use:
        that module imports scipy.stats (about a second of CPU), which training itself
        never needs."""
        if name == "pooled_bias":
            from maxminq.analysis.tables import pooled_bias

            return pooled_bias
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        """The module's names and ``pooled_bias`` (``dir()``, ``help()``, completion)."""
        return sorted({*globals(), "pooled_bias"})


# Also the names that lived here before the split (deep.bias_probes, deep.env_checks,
# deep.run_folder, deep.step_boundary): ``from maxminq.deep.train import X`` still works.
__all__ = [
    "BIAS_TAIL",
    "FIGURE_FILES",
    "OPTIONAL_TABLES",
    "RUN_FILES",
    "TABLE_COLUMNS",
    "bias_horizon",
    "pooled_bias",
    "probe_counts",
    "read_tables",
    "CheckpointWarning",
    "RunSizeWarning",
    "StepBoundary",
    "Trainer",
    "check_resumable",
    "clear_run",
    "episode_observation",
    "folder_lock",
    "run_training",
    "tensorboard_writer_class",
    "warn_if_no_time_limit",
    "warn_if_normalized",
]

# The integer and flag columns of the probes table, held as float64 (exact) while training.
_PROBE_INTS = ("seed", "episode", "step", "episode_step", "end_step")


def _seed_streams(
    seed: int,
) -> tuple[np.random.Generator, torch.Generator, np.random.Generator, np.random.Generator]:
    """Independent streams of one seed: training (actions, resets, replay, members),
    network initialisation, test episodes, and the evaluations during training
    (``eval_every``). A SeedSequence's child i depends on i alone, so the fourth, added
    later, left the first three (and every earlier run) as they were."""
    ss = np.random.SeedSequence(seed)
    train_ss, init_ss, test_ss, eval_ss = ss.spawn(4)
    gen = torch.Generator().manual_seed(int(init_ss.generate_state(1, np.uint64)[0] >> 1))
    rng = np.random.default_rng
    return rng(train_ss), gen, rng(test_ss), rng(eval_ss)


def _image_replay(space: Any, obs_shape: tuple[int, ...]) -> bool:
    """Whether observations are replayed as uint8 (a bool / uint8 image, e.g. MinAtar's)."""
    return space.dtype in (np.bool_, np.uint8) and len(obs_shape) == 3


def _replay_dtype(image: bool) -> np.dtype:
    """How the replay buffers store observations: uint8 images, float32 otherwise."""
    return np.dtype(np.uint8 if image else np.float32)


def replay_bytes(space: Any, seeds: int, rows: int) -> int:
    """Bytes the replay buffers of ``seeds`` x ``rows`` transitions of observations from
    ``space`` take once full, as training lays them out (MinAtar's images as uint8, other
    observations as float32): ``maxminq train``'s check and ``maxminq envs --env``'s line."""
    shape = tuple(int(d) for d in space.shape or ())
    return ReplayBuffers.nbytes(seeds, rows, shape, _replay_dtype(_image_replay(space, shape)))


def _check_replay_memory(cfg: TrainConfig, space: Any) -> int:
    """Refuse a run whose replay buffers alone exceed this machine's memory (``--seeds
    0-20000`` took 15 GB and a minute to reach its first step, on the way to the OOM
    killer); the bytes they take once full otherwise."""
    from maxminq.commands.experiment import physical_memory

    assert cfg.buffer_size is not None and cfg.steps is not None  # resolved
    rows = min(cfg.buffer_size, cfg.steps)  # what the buffers fill
    seeds = len(cfg.seeds)
    need = replay_bytes(space, seeds, rows)
    have = physical_memory()
    if need > have:
        raise UsageError(
            f"--seeds: the replay buffers of {count(seeds, 'seed')} x {rows:,} transitions "
            f"need {size_text(need)}, more than this machine's {size_text(have)}; give "
            "fewer --seeds (several runs) or a smaller --buffer-size"
        )
    return need


def size_text(n: float) -> str:
    """Bytes as a long run's messages say them: ``4.8 kB``, ``163 MB``, ``4.03 GB``."""
    if n < 1e6:
        return f"{n / 1e3:.3g} kB"
    return f"{n / 1e9:.3g} GB" if n >= 1e9 else f"{n / 1e6:.3g} MB"


def free_memory() -> float | None:
    """The memory free for a new run now (Linux's MemAvailable, bytes), None where the OS
    does not say."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return float(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def platform() -> dict[str, Any]:
    """What the numbers of a run's steps rest on besides its options: the versions of torch
    (its kernels' rounding), NumPy (the random streams), Gymnasium (its environments) and
    maxminq, and torch's thread count now (``run_training(threads=)``). A checkpoint keeps
    them, and a run resumed under others is warned (:func:`_warn_if_moved`). The versions
    are those a sweep records (:func:`maxminq.experiments.software.software_versions`),
    without its git revision: a commit that changes no numbers is no other platform."""
    from maxminq.experiments.software import software_versions

    versions = software_versions()
    return {
        **{name: versions.get(name, "?") for name in ("torch", "numpy", "gymnasium", "maxminq")},
        "threads": torch.get_num_threads(),
    }


def _warn_if_moved(saved: Any, path: pathlib.Path, threads: int) -> None:
    """:class:`CheckpointWarning` when the checkpoint at ``path`` was written under another
    :func:`platform` (``saved``; None: an older checkpoint, which did not keep it) than this
    run's on ``threads`` torch threads: it resumes, but an uninterrupted run would not
    promise the same tables (another torch may round its updates otherwise, another thread
    count at some batch sizes too)."""
    if not isinstance(saved, dict):
        return
    now = {**platform(), "threads": threads}

    def said(p: dict[str, Any], k: str) -> str:
        if k == "threads":
            return count(p[k], "torch thread") if isinstance(p.get(k), int) else "?"
        name = {"numpy": "NumPy", "gymnasium": "Gymnasium"}.get(k, k)
        return f"{name} {p.get(k, '?')}"

    differ = [k for k in now if saved.get(k) != now[k]]
    if differ:
        then = ", ".join(said(saved, k) for k in differ)
        here = ", ".join(said(now, k) for k in differ)
        warnings.warn(
            f"--resume: {path} was written under {then}; this run has {here}: it continues, "
            "but its remaining steps may differ from the uninterrupted run's, in their last "
            "bits at first, then in the episodes the networks act on (the same versions and "
            "--threads give the same tables)",
            CheckpointWarning,
            stacklevel=4,
        )


class RunSizeWarning(MaxminqWarning):
    """A run whose replay buffers exceed the memory free now, or whose checkpoint may not
    fit on the disk of its folder: found before it starts, not when they fill or at its
    first checkpoint, hours later."""


def warn_about_size(
    cfg: ResolvedTrainConfig, need: int, out_dir: pathlib.Path, stacklevel: int = 3
) -> None:
    """:class:`RunSizeWarning` when the replay buffers (``need`` bytes once full) exceed the
    memory free now, or when a checkpoint (at least ``need`` bytes, written beside the
    previous one until it replaces it) may not fit on the disk of ``out_dir``. A warning:
    memory and disk may be freed while the run starts; the machine's memory is the limit
    that refuses (``_check_replay_memory``). ``stacklevel``: ``warnings.warn``'s, from
    here."""
    seeds, rows = len(cfg.seeds), min(cfg.buffer_size, cfg.steps)
    buffers = f"the replay buffers of {count(seeds, 'seed')} x {rows:,} transitions"
    free = free_memory()
    if free is not None and need > free:
        warnings.warn(
            f"--buffer-size: {buffers} take {size_text(need)} once full, more than the "
            f"{size_text(free)} of memory free now: the run may be killed for want of memory "
            f"when they fill (by step {rows:,}); free memory, or give fewer --seeds or a "
            "smaller --buffer-size",
            RunSizeWarning,
            stacklevel=stacklevel,
        )
    if not cfg.checkpoint_every:
        return
    folder = pathlib.Path(out_dir).absolute()
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    try:
        disk = shutil.disk_usage(folder).free
    except OSError:
        return
    ckpt = out_dir / "checkpoint" / _CKPT
    kept = ckpt.stat().st_size if ckpt.is_file() else 0  # stays until the new one is whole
    if need + kept > disk:
        # A checkpoint holds the buffers' filled part: the first one past their filling
        # holds them whole (an earlier one may fit; the run stops at one by this step).
        k = cfg.checkpoint_every
        by = min(-(-rows // k) * k, cfg.steps)
        warnings.warn(
            f"--out: a checkpoint of this run holds {buffers} once they are full, at least "
            f"{size_text(need)}, more than the {size_text(disk)} free on the disk of "
            f"{out_dir}: the run would stop at a checkpoint, by step {by:,}; free disk "
            "space, or choose another --out",
            RunSizeWarning,
            stacklevel=stacklevel,
        )


def long_run_note(cfg: ResolvedTrainConfig, need: int, out_dir: pathlib.Path) -> str:
    """What ``maxminq train`` says as a long run starts: the memory its replay buffers take
    (``need`` bytes once full), its checkpoints' size and interval, and how to watch it."""
    seeds, rows = len(cfg.seeds), min(cfg.buffer_size, cfg.steps)
    text = (
        f"the replay buffers of {count(seeds, 'seed')} x {rows:,} transitions take "
        f"{size_text(need)} of memory once full"
    )
    if cfg.checkpoint_every:
        # a checkpoint holds the buffers' filled part: those before they fill, less
        least = "at least" if cfg.checkpoint_every >= rows else "once they are full, at least"
        text += (
            f"; a checkpoint every {cfg.checkpoint_every:,} steps holds them: {least} "
            f"{size_text(need)} in {out_dir / 'checkpoint'}"
        )
    quoted = shlex.quote(str(out_dir))
    return text + (
        f"; from another shell, 'maxminq status {quoted}' tells how far it is "
        f"({out_dir / PROGRESS_FILE}: its speed, time left and returns)"
    )


class SeedUniforms:
    """Per-seed U[0, 1) draws served in blocks, so one step's randomness for all S seeds is
    one array slice instead of 3 + S small generator calls.

    Every step takes the same ``per_step`` numbers from every seed (drawn or not used),
    and row s of each block comes from ``rngs[s]`` alone, so a seed's stream does not
    depend on the other seeds. Layout of a step's row: [0] explore test, [1] random
    action, [2] member to update, [3] next episode's reset seed, [4:] replay indices.
    """

    def __init__(self, rngs: list[np.random.Generator], per_step: int, block: int = 256):
        self.rngs, self.per_step, self.block = rngs, per_step, block
        self.buf = np.zeros((len(rngs), block, per_step))
        self.pos = block  # empty: the first call draws a block

    def next(self) -> np.ndarray:
        """The (S, per_step) uniforms of one step."""
        if self.pos == self.block:
            for s, rng in enumerate(self.rngs):
                self.buf[s] = rng.random((self.block, self.per_step))
            self.pos = 0
        self.pos += 1
        return self.buf[:, self.pos - 1]


def _close_all(envs: list[Any]) -> None:
    """Close each environment of ``envs`` (None: none there)."""
    for env in envs:
        if env is not None:
            env.close()


def _scaled(u: np.ndarray, n: int | np.ndarray) -> np.ndarray:
    """floor(u * n) as int64, kept below n against float round-up."""
    return np.minimum((u * n).astype(np.int64), np.asarray(n) - 1)


class Trainer:
    """State of one batched training run (all seeds); see the module docstring."""

    def __init__(self, config: ResolvedTrainConfig) -> None:
        """Build every seed's environment, random streams, networks and replay buffer for
        the resolved ``config``, and start each seed's first episode (step 0)."""
        self.cfg = cfg = config
        self.S = len(cfg.seeds)
        self.envs: list[Any] = []
        try:  # an environment that fails, or an EnvWarning raised as an error: none left open
            for _ in range(self.S):
                self.envs.append(cfg.make_env())
            self.n_actions, self.obs_shape = self._spaces(self.envs[0], cfg)
            _warn_about_env(self.envs[0], cfg)
        except BaseException:
            _close_all(self.envs)
            raise
        image = _image_replay(self.envs[0].observation_space, self.obs_shape)
        streams = [_seed_streams(s) for s in cfg.seeds]
        self.rngs = [r for r, _, _, _ in streams]
        self.test_rngs = [t for _, _, t, _ in streams]
        self.eval_rngs = [e for _, _, _, e in streams]
        self.uniforms = SeedUniforms(self.rngs, 4 + cfg.batch_size)
        self.learner = Learner(
            cfg.agent,
            cfg.n,
            [g for _, g, _, _ in streams],
            cfg.network,
            self.obs_shape,
            self.n_actions,
            cfg.optimizer,
            cfg.lr,
            cfg.optimizer_kwargs,
            cfg.loss,
            cfg.grad_clip,
            cfg.gamma,
            cfg.update_members,
            cfg.hidden,
            cfg.operator,
            cfg.op_kwargs,
        )
        self.replay = ReplayBuffers(self.S, cfg.buffer_size, self.obs_shape, _replay_dtype(image))
        # Counters and per-seed episode state.
        self.step = 0
        self.active = np.ones(self.S, dtype=bool)
        self.diverged_step = [-1] * self.S
        self.diverged_cause = [""] * self.S  # one line each: G's values, or the networks'
        self.obs = np.zeros((self.S, *self.obs_shape), dtype=np.float32)
        self.ep_seed = [0] * self.S
        self.ep_actions: list[list[int]] = [[] for _ in range(self.S)]
        self.ep_rewards: list[list[float]] = [[] for _ in range(self.S)]
        self.ep_count = [0] * self.S
        self.probes: list[list[tuple[int, float]]] = [[] for _ in range(self.S)]
        # The probes table (save_probes): float64 blocks of rows, one per episode (compact:
        # millions of rows as Python lists would take GBs).
        self.probe_rows: list[np.ndarray] = []
        self._reset_acc()
        self.rows: dict[str, list[list[Any]]] = {"episodes": [], "metrics": [], "tests": []}
        if cfg.eval_every:  # only then: a default run's checkpoint stays as it was
            self.rows["evals"] = []
        self._interval_start = (0, time.perf_counter())
        self.cut_check = CutEpisodesCheck(cfg)  # warns when the time limit hides the bias
        self.writer: Any = None
        # What the steps were computed with, one entry per stretch (``note_software``).
        self.software: list[dict[str, Any]] = []
        for s in range(self.S):
            self._new_episode(s, int(self.rngs[s].integers(2**31 - 1)))

    @staticmethod
    def _spaces(env: Any, cfg: TrainConfig) -> tuple[int, tuple[int, ...]]:
        space = env.action_space
        check_action_space(space, cfg.env_id)
        obs_space = env.observation_space
        if obs_space.shape is None:
            raise UsageError(
                f"--env: {cfg.env_id} has observation space {space_text(obs_space)} (no shape)"
            )
        obs_shape = tuple(int(d) for d in obs_space.shape)
        cfg.check_observation_shape(obs_shape)
        return int(space.n), obs_shape

    @staticmethod
    def check_env(cfg: ResolvedTrainConfig) -> int:
        """Build one environment and check it suits the (resolved) config: its spaces, the
        observations of a first ``reset()`` and ``step(0)`` against its observation space's
        shape (a wrong shape would otherwise be broadcast into the buffers), and that step's
        reward (a number) and flags (bools); that the replay buffers fit in memory; and that
        generalized-dqn's operator maps one seed's targets (B, N, A) to B finite values.
        Returns the bytes the replay buffers take once full."""
        env = cfg.make_env()
        try:
            n_actions, obs_shape = Trainer._spaces(env, cfg)
            if cfg.operator is not None:  # generalized-dqn's G, on torch zeros
                check_operator(cfg.operator, cfg.op_kwargs, cfg.batch_size, cfg.n, n_actions)
            image = _image_replay(env.observation_space, obs_shape)
            need = _check_replay_memory(cfg, env.observation_space)
            # Gymnasium's checker warns here too; its lines must not precede our one-line
            # error (the training environments are checked again, and warn, when they run).
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                # One reset and one step (the old Gym API: one line).
                (obs, _), (next_obs, reward, terminated, truncated, _) = _check_api(env, cfg.env_id)
            first = _observation(obs, obs_shape, cfg.env_id, "reset()")
            second = _observation(next_obs, obs_shape, cfg.env_id, "step()")
            pairs = (("reset()", first), ("step()", second)) if image else ()
            for where, o in pairs:  # the replay buffers of a uint8 / bool image space: uint8
                lost = o != o.astype(np.uint8)
                if lost.any():
                    raise UsageError(
                        f"--env: {cfg.env_id}'s observation space is "
                        f"{space_text(env.observation_space)}"
                        f" but its {where} gave values such as {o[lost][0]}, which the uint8 "
                        "replay buffers cannot hold"
                    )
            try:
                float(reward)
            except (TypeError, ValueError):
                raise UsageError(
                    f"--env: {cfg.env_id}'s step() returned the reward {reward!r}; expected a "
                    "number"
                ) from None
            for name, flag in (("terminated", terminated), ("truncated", truncated)):
                if not isinstance(flag, int | np.bool_ | np.integer):  # bool is an int; no array
                    raise UsageError(
                        f"--env: {cfg.env_id}'s step() returned {name}={flag!r}; expected a bool"
                    )
        finally:
            env.close()
        return need

    def note_software(self) -> None:
        """Record what the steps from now on are computed with: the software versions
        (``experiments.software.software_versions``: maxminq and its git revision, Python,
        NumPy, torch, Gymnasium, ...) and torch's thread count now, as a new entry of
        ``software`` starting at this step (``from_step``) unless the last entry already
        says the same. Kept in checkpoints, so a run resumed elsewhere lists each stretch;
        written to ``software.json`` with the tables."""
        from maxminq.experiments.software import software_versions

        now = {**software_versions(), "threads": torch.get_num_threads()}
        last = (
            {k: v for k, v in self.software[-1].items() if k != "from_step"}
            if self.software
            else None
        )
        if now != last:
            self.software.append({"from_step": self.step, **now})

    # --- episodes ---------------------------------------------------------------------------

    def _new_episode(self, s: int, seed: int) -> None:
        self.ep_seed[s] = seed
        obs, _ = self.envs[s].reset(seed=self.ep_seed[s])
        self.obs[s] = _observation(obs, self.obs_shape, self.cfg.env_id, "reset()")
        self.ep_actions[s], self.ep_rewards[s], self.probes[s] = [], [], []

    def _end_episode(self, s: int, terminated: bool, truncated: bool, next_seed: int = 0) -> None:
        rewards = self.ep_rewards[s]
        self.ep_count[s] += 1
        row = [
            self.cfg.seeds[s],
            self.ep_count[s],
            self.step + 1,
            float(sum(rewards)),
            len(rewards),
            terminated,
            truncated,
        ]
        self.rows["episodes"].append(row)
        if self.writer is not None:
            self._log_episode(row)
        if self.probes[s]:
            g = _discounted_returns(rewards, self.cfg.gamma)
            n, end = len(rewards), self.step + 1
            kept = []
            for t, est in self.probes[s]:
                if probe_counts(terminated, n - t, self.cfg.gamma):
                    ret = float(g[t])
                    self.acc_bias[s].append(est - ret)
                    if self.cfg.save_probes:  # rows only when asked for
                        kept.append(
                            [row[0], row[1], end - n + t, t, end, terminated, est, ret, est - ret]
                        )
            if kept:
                self.probe_rows.append(np.array(kept, dtype=np.float64))
        self._new_episode(s, next_seed)

    # --- one training step ------------------------------------------------------------------

    def epsilon(self, t: int) -> float:
        """Purely random for ``learning_starts`` steps, then linear from ``eps_start`` to
        ``eps_end`` over ``eps_decay_steps`` (as MinAtar's DQN; the authors' code counts the
        decay from step 0, see docs/deviations.md), then ``eps_end`` exactly."""
        c = self.cfg
        if t < c.learning_starts:
            return 1.0
        frac = 1.0 if c.eps_decay_steps == 0 else (t - c.learning_starts) / c.eps_decay_steps
        if frac >= 1.0:  # not the formula: 1 + (0.01 - 1) * 1 is 0.010000000000000009
            return c.eps_end
        lo, hi = sorted((c.eps_start, c.eps_end))  # a rising schedule too
        return min(hi, max(lo, c.eps_start + (c.eps_end - c.eps_start) * frac))

    def _diverge(self, s: int, cause: str = "", step: int | None = None) -> None:
        """Seed position ``s`` stops: diverged at ``step`` (default: the step under way),
        for ``cause`` (the ``runs`` table's ``diverged_cause``)."""
        if self.active[s]:
            self.active[s] = False
            self.diverged_step[s] = self.step + 1 if step is None else step
            self.diverged_cause[s] = cause

    def train_step(self) -> None:
        """Act in every live seed's environment, store, learn, sync targets, log."""
        c, t = self.cfg, self.step
        eps = self.epsilon(t)
        learning = t >= c.learning_starts
        obs_t = torch.from_numpy(self.obs)
        u = self.uniforms.next()  # (S, 4 + batch): this step's randomness, every seed
        actions, live = self._act(obs_t, u, eps, learning)
        live_list = live.tolist()  # Python ints: cheaper per-seed indexing below
        if learning and t % c.bias_probe_every == 0 and len(live):
            probed = self.learner.estimate(obs_t, torch.from_numpy(actions), live)
            est = probed.numpy().tolist()
            for s in live_list:
                self.probes[s].append((len(self.ep_rewards[s]), est[s]))
        prev = self.obs.copy()
        reset_seeds = _scaled(u[:, 3], 2**31 - 1)
        next_obs, rewards, done = self._step_envs(prev, live, live_list, actions, reset_seeds)
        self.replay.add(prev, actions, rewards, next_obs, done)
        if learning and len(live):
            self._learn(live, live_list, u)
        if (t + 1) % c.target_update == 0:
            self.learner.sync_targets()
        self.step = t + 1
        if self.step % c.bias_every == 0:
            self._log_metrics(eps)
            self.cut_check.interval(self.rows["episodes"], self.step)
        if c.eval_every and self.step % c.eval_every == 0:
            self.evaluate_during_training()

    def _act(
        self, obs_t: torch.Tensor, u: np.ndarray, eps: float, learning: bool
    ) -> tuple[np.ndarray, np.ndarray]:
        """Every seed's action of this step, eps-greedy on the uniforms ``u``, and the live
        seeds (a seed whose values to act on are not finite has diverged)."""
        live = np.flatnonzero(self.active)
        actions = _scaled(u[:, 1], self.n_actions)
        explore = u[:, 0] < eps  # eps-greedy (before learning starts eps = 1: all random)
        if learning and not explore[live].all():  # no forward pass when every seed explores
            q = self.learner.greedy_values(obs_t).numpy()
            # Only the seeds that act on q: one that explores is found by its update below,
            # as when every seed explores (no q) or it trains alone, not here because another
            # seed acted greedily (it stopped before its environment step: other tables).
            greedy = live[~explore[live]]
            for s in greedy[~np.isfinite(q[greedy]).all(axis=1)]:
                self._diverge(int(s), "networks: the Q-values it acts on went non-finite")
            live = np.flatnonzero(self.active)
            actions = np.where(explore, actions, q.argmax(axis=1))
        return actions, live

    def _step_envs(
        self,
        prev: np.ndarray,
        live: np.ndarray,
        live_list: list[int],
        actions: np.ndarray,
        reset_seeds: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Step the live seeds' environments with ``actions`` from the observations ``prev``,
        and end the episodes that ended (the next one reset with the seed's ``reset_seeds``).
        Returns the transitions' next observations, rewards and done flags, for all seeds."""
        c = self.cfg
        next_obs = prev.copy()
        rewards = np.zeros(self.S, dtype=np.float32)
        done = np.zeros(self.S, dtype=np.float32)
        act_list = actions.tolist()
        outs, ended = [], []
        for s in live_list:
            a = act_list[s]
            o, r, term, trunc, _ = self.envs[s].step(a)
            outs.append((o, r, term or (trunc and c.timeout_as_terminal)))
            self.ep_actions[s].append(a)
            self.ep_rewards[s].append(float(r))
            if term or trunc:
                ended.append((s, bool(term), bool(trunc)))
        if outs:  # one array write per field for all live seeds
            obs_l, rew_l, done_l = zip(*outs, strict=True)
            next_obs[live] = _observations(obs_l, self.obs_shape, c.env_id)
            rewards[live] = rew_l
            # Truncation bootstraps unless the original code's behaviour is asked for.
            done[live] = done_l
            self.obs[live] = next_obs[live]
        for s, term, trunc in ended:  # resets overwrite self.obs[s] with the new episode's
            self._end_episode(s, term, trunc, int(reset_seeds[s]))
        return next_obs, rewards, done

    def _learn(self, live: np.ndarray, live_list: list[int], u: np.ndarray) -> None:
        """Update each live seed's members on mini-batches of its replay buffer (indices from
        the uniforms ``u``, or the seed's generator for several members per update); a seed
        whose update is not finite has diverged."""
        c = self.cfg
        if self.learner.update_members == 1:
            idx = _scaled(u[live, 4:], self.replay.size)  # uniform, with replacement
            members = _scaled(u[live, 2:3], self.learner.n_online)
        else:  # a subset without replacement and one mini-batch per member (Algorithm
            # 1), drawn from the seed's generator
            rngs = [self.rngs[s] for s in live]
            members = self.learner.choose_members(rngs)
            n_idx = self.learner.update_members * c.batch_size
            idx = np.stack([rng.integers(0, self.replay.size, n_idx) for rng in rngs])
        batch = self.replay.gather(live, idx)
        loss, qm, ok = self.learner.update(live, members, batch)
        per_seed = zip(live_list, loss.tolist(), qm.tolist(), ok.tolist(), strict=True)
        for j, (s, lo, q_s, ok_s) in enumerate(per_seed):
            if not ok_s:  # G's targets, or the networks (Learner.divergence_cause)
                self._diverge(s, self.learner.divergence_cause(j))
                continue
            self.acc_loss[s] += lo
            self.acc_q[s] += q_s
            self.acc_n[s] += 1

    def _reset_acc(self) -> None:
        self.acc_loss = [0.0] * self.S
        self.acc_q = [0.0] * self.S
        self.acc_n = [0] * self.S
        self.acc_bias: list[list[float]] = [[] for _ in range(self.S)]

    def log_final_metrics(self) -> None:
        """Log the last, partial metrics interval (steps since the last multiple of
        ``bias_every``). Called after the last checkpoint, which an extended run continues
        from with this interval still open."""
        if self.step % self.cfg.bias_every:
            self._log_metrics(self.epsilon(self.step - 1))

    def _log_metrics(self, eps: float) -> None:
        t0_step, t0 = self._interval_start
        now = time.perf_counter()
        live = int(self.active.sum())
        sps = (self.step - t0_step) * max(live, 1) / max(now - t0, 1e-9)
        for s in range(self.S):
            if not self.active[s]:
                continue
            n = self.acc_n[s]
            b = np.asarray(self.acc_bias[s])
            row = [
                self.cfg.seeds[s],
                self.step,
                self.acc_loss[s] / n if n else math.nan,
                self.acc_q[s] / n if n else math.nan,
                float(b.mean()) if b.size else math.nan,
                float(b.std()) if b.size else math.nan,
                float(np.abs(b).mean()) if b.size else math.nan,
                int(b.size),
                eps,
                sps,
            ]
            self.rows["metrics"].append(row)
            if self.writer is not None:
                self._log_metrics_row(row)
        self._reset_acc()
        self._interval_start = (self.step, now)

    # --- TensorBoard ------------------------------------------------------------------------

    def open_writer(self, writer_class: Any, folder: pathlib.Path) -> None:
        """Log to TensorBoard in ``folder``: every metrics row, each episode's return and
        length at the step it ended, each seed's mean evaluation return at each evaluation
        (``eval_every``) and its mean test return at the last step. A
        run at step k (a resumed one: its checkpoint's) hides what earlier runs logged there
        from step k on (``purge_step``: it would be drawn twice, or it is a finished run's
        last partial interval, which an extended run logs later) and logs its checkpoint's
        rows of step k again. Each writer's file name ends in the time in nanoseconds:
        tensorboardX names files by the second only, so a run resumed within the same second
        would overwrite the file before it (and TensorBoard reads files in name order)."""
        suffix = f".{time.time_ns():020d}"
        self.writer = writer_class(str(folder), purge_step=self.step, filename_suffix=suffix)
        for row in self.rows["metrics"]:
            if row[1] == self.step:
                self._log_metrics_row(row)
        for row in self.rows["episodes"]:
            if row[2] == self.step:
                self._log_episode(row)
        if self.cfg.eval_every:
            self._log_evals([r for r in self.rows["evals"] if r[1] == self.step])

    def _log_metrics_row(self, row: list[Any]) -> None:
        tag = f"seed{row[0]}"
        for name, v in zip(TABLE_COLUMNS["metrics"][2:], row[2:], strict=True):
            if math.isfinite(v):  # bias_n (an int) too: how many probes bias_mean rests on
                self.writer.add_scalar(f"{tag}/{name}", v, row[1])

    def _log_evals(self, rows: list[list[Any]]) -> None:
        """Each seed's mean return over ``rows``, the rows of one evaluation (only they are
        read: the table grows with every evaluation)."""
        returns: dict[int, list[float]] = {}
        for seed, _, _, ret, *_ in rows:
            returns.setdefault(seed, []).append(ret)
        for seed, rets in returns.items():
            self.writer.add_scalar(f"seed{seed}/eval_return", np.mean(rets), rows[0][1])

    def _log_episode(self, row: list[Any]) -> None:
        seed, _, step, ret, length = row[:5]
        self.writer.add_scalar(f"seed{seed}/return", ret, step)
        self.writer.add_scalar(f"seed{seed}/length", length, step)

    # --- evaluation -------------------------------------------------------------------------

    def _live_envs(self) -> list[Any]:
        """A new environment for each live seed (None for a diverged one), for test and
        evaluation episodes: never the training environments, whose episodes go on."""
        return [self.cfg.make_env() if a else None for a in self.active]

    def play_episodes(
        self,
        envs: list[Any],
        rngs: list[np.random.Generator],
        episodes: int,
        bar: Any = None,
        what: str = "a test episode",
    ) -> list[tuple[int, int, float, int, bool, bool]]:
        """``episodes`` episodes in each environment of ``envs`` (one per seed; None: none)
        with eps = ``eval_eps``, greedy on the same combined values as the behaviour policy,
        all seeds in lock-step; seed s draws its episodes' reset seeds and exploration from
        ``rngs[s]`` alone. Returns (seed index, episode, return, length, terminated,
        truncated) per episode, in the order they end; ``bar`` (tqdm) counts them. Actions go
        through ``deep.agents.policy_action``, as ``TrainedAgent.act``'s: a seed whose values are
        not all finite there (its networks NaN after its last update, or values beyond
        float32 at an observation; ``what`` says where) is recorded as diverged at this
        step, and none of its episodes is returned."""
        c = self.cfg
        obs = np.zeros((self.S, *self.obs_shape), dtype=np.float32)
        remaining = [episodes if env is not None else 0 for env in envs]
        ret, length = [0.0] * self.S, [0] * self.S
        done: list[tuple[int, int, float, int, bool, bool]] = []
        n = self.learner.n_online

        def reset(s: int) -> None:
            o = envs[s].reset(seed=int(rngs[s].integers(2**31 - 1)))[0]
            where = f"seed position {s} in --seeds, reset()"
            obs[s] = episode_observation(o, self.obs_shape, c.env_id, where)
            ret[s], length[s] = 0.0, 0

        for s in range(self.S):
            if remaining[s]:
                reset(s)
        while any(remaining):
            q = self.learner.greedy_values(torch.from_numpy(obs)).numpy()
            for s in range(self.S):
                if not remaining[s]:
                    continue
                nets = self.learner.online.flat[s * n : (s + 1) * n]
                try:
                    a = policy_action(q[s], nets, c.eval_eps, rngs[s])
                except ValuesNotFinite as err:
                    self._diverge(s, _cause_in_episode(err, what), self.step)
                    remaining[s] = 0
                    continue
                o, r, term, trunc, _ = envs[s].step(int(a))
                where = f"seed position {s} in --seeds, step()"
                obs[s] = episode_observation(o, self.obs_shape, c.env_id, where, r)
                ret[s] += float(r)
                length[s] += 1
                if term or trunc:
                    ended = (bool(term), bool(trunc))
                    done.append((s, episodes - remaining[s] + 1, ret[s], length[s], *ended))
                    remaining[s] -= 1
                    if bar is not None:
                        bar.update(1)
                    if remaining[s]:
                        reset(s)
        return [row for row in done if self.active[row[0]]]

    def evaluate(self, progress: bool = False) -> None:
        """The paper's test: ``eval_episodes`` test episodes per live seed with eps =
        ``eval_eps`` (``play_episodes``, the seeds' test streams), after training."""
        c = self.cfg
        if c.eval_episodes == 0:
            return
        envs = self._live_envs()
        total = c.eval_episodes * sum(env is not None for env in envs)
        bar = progress_bar(total=total, desc="test episodes", unit="ep", enabled=progress)
        try:
            played = self.play_episodes(envs, self.test_rngs, c.eval_episodes, bar)
        finally:
            bar.close()
            _close_all(envs)
        for s, ep, ret, length, terminated, truncated in played:
            self.rows["tests"].append([c.seeds[s], ep, ret, length, terminated, truncated])
        if self.writer is not None:  # each seed's mean test return, at the last step
            for seed in c.seeds:
                returns = [row[2] for row in self.rows["tests"] if row[0] == seed]
                if returns:
                    self.writer.add_scalar(f"seed{seed}/test_return", np.mean(returns), self.step)

    def evaluate_during_training(self) -> None:
        """One evaluation during training (``eval_every``): ``eval_every_episodes`` episodes
        per live seed (``play_episodes``, the seeds' evaluation streams), as rows of the
        ``evals`` table at this step. Its time is left out of the metrics' ``steps_per_s``."""
        c, start = self.cfg, time.perf_counter()
        envs = self._live_envs()
        try:
            episodes = self.play_episodes(
                envs, self.eval_rngs, c.eval_every_episodes, what="an evaluation episode"
            )
        finally:
            _close_all(envs)
        rows = [[c.seeds[s], self.step, *played] for s, *played in episodes]
        self.rows["evals"] += rows
        if self.writer is not None and rows:
            self._log_evals(rows)
        interval_step, interval_t0 = self._interval_start
        self._interval_start = (interval_step, interval_t0 + time.perf_counter() - start)

    # --- tables and checkpoints -------------------------------------------------------------

    def tables(self) -> dict[str, pd.DataFrame]:
        """The result tables (see the module docstring): four, ``probes`` with
        ``save_probes`` and ``evals`` with ``eval_every``."""
        ep = pd.DataFrame(
            self.rows["episodes"],
            columns=[c for c in TABLE_COLUMNS["episodes"] if c != "return_avg100"],
        )
        ep = ep.sort_values(["seed", "episode"], kind="stable").reset_index(drop=True)
        ep.insert(
            5,
            "return_avg100",
            ep.groupby("seed")["return"].transform(lambda x: x.rolling(100, min_periods=1).mean()),
        )
        tests = pd.DataFrame(self.rows["tests"], columns=TABLE_COLUMNS["tests"])
        tests = tests.sort_values(["seed", "episode"], kind="stable").reset_index(drop=True)
        metrics = pd.DataFrame(self.rows["metrics"], columns=TABLE_COLUMNS["metrics"])
        metrics = metrics.sort_values(["seed", "step"], kind="stable").reset_index(drop=True)
        runs = pd.DataFrame(
            [
                [
                    seed,
                    "done" if self.active[s] else "diverged",
                    self.diverged_step[s],
                    self.diverged_cause[s],
                ]
                for s, seed in enumerate(self.cfg.seeds)
            ],
            columns=TABLE_COLUMNS["runs"],
        )
        out = {"episodes": ep, "tests": tests, "metrics": metrics, "runs": runs}
        if self.cfg.eval_every:
            evals = pd.DataFrame(self.rows["evals"], columns=TABLE_COLUMNS["evals"])
            order = ["seed", "step", "episode"]
            out["evals"] = evals.sort_values(order, kind="stable").reset_index(drop=True)
        if self.cfg.save_probes:  # rows are appended in step order within each seed
            probes = pd.DataFrame(self._probe_array(), columns=TABLE_COLUMNS["probes"])
            probes = probes.astype({**dict.fromkeys(_PROBE_INTS, "int64"), "terminated": bool})
            out["probes"] = probes.sort_values("seed", kind="stable").reset_index(drop=True)
        return out

    def state_dict(self, copy: bool = True) -> dict[str, Any]:
        """Everything needed to continue exactly (tensors and plain Python values only).
        ``copy=False``: full replay buffers as views of the live ones (``save_checkpoint``:
        written before the next step changes them), not a copy as large as they are."""
        state = {
            "config": self.cfg.result_key(),
            "step": self.step,
            "learner": self.learner.state_dict(),
            "replay": self.replay.state_dict(copy),
            "rngs": [r.bit_generator.state for r in self.rngs],
            "test_rngs": [r.bit_generator.state for r in self.test_rngs],
            "uniforms": torch.from_numpy(self.uniforms.buf.copy()),
            "uniforms_pos": self.uniforms.pos,
            "active": self.active.tolist(),
            "diverged_step": list(self.diverged_step),
            "diverged_cause": list(self.diverged_cause),
            "obs": torch.from_numpy(self.obs.copy()),
            "ep_seed": list(self.ep_seed),
            "ep_actions": [list(a) for a in self.ep_actions],
            "ep_rewards": [list(r) for r in self.ep_rewards],
            "ep_count": list(self.ep_count),
            "probes": [[list(p) for p in ps] for ps in self.probes],
            "acc": [self.acc_loss, self.acc_q, self.acc_n, self.acc_bias],
            "rows": self.rows,
            "platform": platform(),  # what a resume elsewhere warns about (``_warn_if_moved``)
            "software": [dict(entry) for entry in self.software],  # software.json's
        }
        if self.cfg.save_probes:
            state["probe_rows"] = torch.from_numpy(self._probe_array())
        if self.cfg.eval_every:
            state["eval_rngs"] = [r.bit_generator.state for r in self.eval_rngs]
        return state

    def _probe_array(self) -> np.ndarray:
        """The probes table's rows so far as one float64 array."""
        width = len(TABLE_COLUMNS["probes"])
        return np.concatenate([np.empty((0, width)), *self.probe_rows])

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore ``state_dict()`` output and rebuild each environment's exact state by
        resetting it with the episode's seed and replaying the episode's actions."""
        check_resumable(json.loads(state["config"]), self.cfg, int(state["step"]))
        self.step = int(state["step"])
        self.learner.load_state_dict(state["learner"])
        self.replay.load_state_dict(state["replay"])
        for r, st in zip(self.rngs, state["rngs"], strict=True):
            r.bit_generator.state = st
        for r, st in zip(self.test_rngs, state["test_rngs"], strict=True):
            r.bit_generator.state = st
        if self.cfg.eval_every:  # the same options: the checkpoint has them
            for r, st in zip(self.eval_rngs, state["eval_rngs"], strict=True):
                r.bit_generator.state = st
        self.uniforms.buf[:] = state["uniforms"].numpy()
        self.uniforms.pos = int(state["uniforms_pos"])
        self.active = np.array(state["active"], dtype=bool)
        self.diverged_step = list(state["diverged_step"])
        # A checkpoint written before the causes were recorded has none: its diverged seeds
        # say so (an empty cause reads as a seed that did not diverge).
        unknown = [("" if a else CAUSE_NOT_RECORDED) for a in self.active.tolist()]
        self.diverged_cause = list(state.get("diverged_cause", unknown))
        self.ep_seed = list(state["ep_seed"])
        self.ep_actions = [list(a) for a in state["ep_actions"]]
        self.ep_rewards = [list(r) for r in state["ep_rewards"]]
        self.ep_count = list(state["ep_count"])
        self.probes = [[(int(t), float(e)) for t, e in ps] for ps in state["probes"]]
        self.acc_loss, self.acc_q, self.acc_n, self.acc_bias = (list(x) for x in state["acc"])
        self.rows = {k: [list(r) for r in v] for k, v in state["rows"].items()}
        # A checkpoint written before evaluation rows recorded how their episodes ended
        # (seed, step, episode, return, length): those flags are unknown, left empty.
        width = len(TABLE_COLUMNS["evals"])
        for row in self.rows.get("evals", []):
            row += [None] * (width - len(row))
        self.cut_check = CutEpisodesCheck(self.cfg)  # counts the restored episodes afresh
        if self.cfg.save_probes:
            self.probe_rows = [state["probe_rows"].numpy().copy()]
        self.obs = state["obs"].numpy().copy()
        # A checkpoint written before 2026-11-25 kept only the platform it was written under
        # (since when is unknown: from_step None).
        old = state.get("platform")
        before = [{"from_step": None, **old}] if isinstance(old, dict) else []
        self.software = [dict(entry) for entry in state.get("software", before)]
        stateful = _cross_episode_wrappers(self.envs[0])
        if stateful:  # replaying one episode cannot restore statistics of all before it
            raise CannotResumeError(
                f"--resume: {self.cfg.env_id} is wrapped in {' and '.join(stateful)}, whose "
                "running statistics a checkpoint does not hold, so it cannot be resumed exactly"
            )
        for s in range(self.S):
            if not self.active[s]:
                continue
            o, _ = self.envs[s].reset(seed=self.ep_seed[s])
            # Its rewards and flags too, not the last observation alone: an environment
            # whose rewards drift across episodes replays the same observations with other
            # rewards, and the resumed run differed silently.
            same = True
            for a, reward in zip(self.ep_actions[s], self.ep_rewards[s], strict=True):
                o, now, term, trunc, _ = self.envs[s].step(a)
                same = same and float(now) == reward and not (term or trunc)
            if not (same and np.array_equal(np.asarray(o, dtype=np.float32), self.obs[s])):
                raise CannotResumeError(
                    f"--resume: {self.cfg.env_id} did not replay to its checkpointed state "
                    f"(seed {self.cfg.seeds[s]}): the environment is not deterministic given "
                    "its reset seed and actions (e.g. it draws from np.random or random, or "
                    "keeps state across episodes), so it cannot be resumed exactly"
                )
        self._interval_start = (self.step, time.perf_counter())

    def save_checkpoint(self, folder: pathlib.Path) -> None:
        """Write ``folder/state.pt`` atomically (temp file + ``os.replace``), with the
        SHA-256 of its contents in the same file (``sha256``, :func:`state_digest`)."""
        folder.mkdir(parents=True, exist_ok=True)
        state = self.state_dict(copy=False)  # no second copy of the buffers in memory
        state["sha256"] = state_digest(state)
        atomic_write(folder / _CKPT, lambda tmp: torch_save(state, tmp))

    def close(self) -> None:
        """Close environments and the TensorBoard writer."""
        for env in self.envs:
            env.close()
        if self.writer is not None:
            self.writer.close()


# The diverged_cause of a seed that diverged before a checkpoint of the old format.
CAUSE_NOT_RECORDED = "not recorded: a checkpoint written before 2026-11-24 does not keep causes"


def _cause_in_episode(err: ValuesNotFinite, what: str) -> str:
    """The ``runs`` table's ``diverged_cause`` of a seed that could not act in ``what`` (a
    test or an evaluation episode), from ``policy_action``'s ``err``."""
    if err.networks:
        return f"networks: its networks held NaN or inf in {what} (after its last update)"
    return f"networks: its action values in {what} were {err.value} (beyond float32)"


def tensorboard_writer_class() -> Any:
    """TensorBoard's ``SummaryWriter`` (or tensorboardX's); UsageError naming
    ``--tensorboard`` if neither is installed (asked for, it must not silently log nothing)."""
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        try:
            from tensorboardX import SummaryWriter  # type: ignore[no-redef]  # the fallback
        except ImportError:
            raise UsageError(
                "--tensorboard: needs the tensorboard or tensorboardX package (pip install "
                "tensorboard); neither is installed"
            ) from None
    return SummaryWriter


def run_training(
    config: TrainConfig,
    out_dir: str | os.PathLike[str],
    *,
    resume: bool = True,
    overwrite: bool = False,
    progress: bool = True,
    stop_after: int | None = None,
    threads: int = 1,
) -> dict[str, pd.DataFrame]:
    """Train ``config`` (all seeds batched), test, and write the tables to ``out_dir``.

    With ``resume`` a finished run in ``out_dir`` is read back instead of re-run, and a
    checkpoint there is continued; a larger ``steps`` extends a run from its checkpoint
    (the last one of a finished run), keeping its metrics interval (``check_resumable``);
    a run there with other options is a UsageError. ``overwrite=True`` (``maxminq train
    --overwrite``) replaces whatever run is in ``out_dir`` instead: its tables, figure,
    model, checkpoint and TensorBoard logs are deleted (:func:`clear_run`) once the
    environment has been checked, and ``config`` trains from the start (``resume`` is not
    consulted); a folder another run is training in is refused (UsageError) untouched.
    An env id that another process could not rebuild (``"__main__:EnvId"``, or a bare id
    registered by the calling script) trains, after an :class:`EnvIdWarning` saying to use
    ``module:EnvId`` (``deep.config.env_id_elsewhere``).
    ``stop_after`` (steps) stops early after writing a checkpoint, as a kill would (used by
    tests); it then returns an empty dict.
    ``threads``: torch threads while training (default 1: the small networks gain little
    from more, and sweeps run one process per core); results do not depend on it at the
    default batch of 32 (tested; at some small batch sizes the updates round otherwise in
    their last bits, and the run then parts from the one-thread run: docs/deep-agents.md's
    Threads; a resume on another count warns, and ``software.json`` records it).

    Ctrl-C (SIGINT) and SIGTERM during the training steps (in the main thread) stop the run
    at the end of the step under way, after a checkpoint of that step (none with
    ``checkpoint_every`` 0), through the handler that was in place (Ctrl-C: a
    KeyboardInterrupt; SIGTERM: the process ends, or ``maxminq.cli.Terminated`` inside
    ``sigterm_as_interrupt()``); a second Ctrl-C stops at once, the previous checkpoint
    kept. A KeyboardInterrupt that ends the run carries ``checkpoint_step``: the step of
    the checkpoint this call last wrote to ``out_dir`` or resumed from, which ``resume``
    continues (None: neither), and ``checkpoint_error``: the OSError (a full disk) that
    kept the stop's own checkpoint from being written, else None.
    """
    if not isinstance(config, TrainConfig):  # e.g. a dict of options
        raise UsageError(
            f"config: expected a maxminq.deep.TrainConfig, got {type(config).__name__} "
            "(write TrainConfig(**options))"
        )
    if not is_whole(threads) or threads < 1:  # torch's RuntimeError came after --overwrite
        raise UsageError(f"--threads: expected a whole number >= 1, got {threads!r}")
    start_env_id_check(config.env_id)  # runs while the options and the env are checked
    from maxminq.analysis.runs import as_path
    from maxminq.cli import check_out_folder  # the command's check: a file, no rights

    # None was a TypeError, '' the current folder (the command refuses --out ''); "." is it
    out_dir = as_path(out_dir, "--out")
    check_out_folder(out_dir, "--out")
    cfg = config.resolve()
    writer_class = tensorboard_writer_class() if cfg.tensorboard else None
    need = Trainer.check_env(cfg)  # a one-line error before out_dir is touched
    warn_if_not_repeatable(cfg)  # e.g. np.random in the environment: seeds would not repeat
    warn_about_steps(cfg)  # never learns, or no evaluation: the command's warnings too
    elsewhere = env_id_elsewhere(cfg.env_id)
    if elsewhere:  # trains here, but the run could not be evaluated later: say so first
        warnings.warn(elsewhere, EnvIdWarning, stacklevel=2)
    out_dir.mkdir(parents=True, exist_ok=True)
    with folder_lock(out_dir):
        if overwrite:  # under the lock: a run training there keeps its files
            clear_run(out_dir)
            resume = False
        files = _RunFiles.of(out_dir)
        return _train_in(
            cfg, config, writer_class, files, resume, progress, stop_after, threads, need
        )


def _interrupted_note(out_dir: pathlib.Path, step: int | None, steps: int) -> str:
    """The message of the KeyboardInterrupt that stopped a run in ``out_dir``: where the
    next ``run_training`` of the same config and folder continues (``step``: its
    checkpoint's, None if none was written)."""
    if step is None:
        return (
            f"run_training stopped before any checkpoint in {out_dir} was written: run it "
            "again to start the run afresh"
        )
    return (
        f"run_training stopped; {out_dir / 'checkpoint'} holds the checkpoint of step "
        f"{step:,} (of {steps:,}): the same run_training (config and folder) continues from it"
    )


class _RunFiles(NamedTuple):
    """Where ``run_training`` keeps a run's files in its folder ``out``: derived once
    (:meth:`of`), for ``_train_in`` and ``_train_with``."""

    out: pathlib.Path
    checkpoint_dir: pathlib.Path  # what Trainer.save_checkpoint writes in
    checkpoint: pathlib.Path  # the checkpoint it writes there, read to resume
    config: pathlib.Path  # the run's resolved options, there while it trains

    @classmethod
    def of(cls, out: pathlib.Path) -> _RunFiles:
        """The files of the run in ``out``."""
        checkpoint_dir = out / "checkpoint"
        return cls(out, checkpoint_dir, checkpoint_dir / _CKPT, out / "config.json")


def _train_in(
    cfg: ResolvedTrainConfig,
    config: TrainConfig,
    writer_class: Any,
    files: _RunFiles,
    resume: bool,
    progress: bool,
    stop_after: int | None,
    threads: int,
    need: int,
) -> dict[str, pd.DataFrame]:
    """``run_training`` once ``files.out`` is held: ``cfg`` is ``config`` resolved, ``need``
    the bytes of its full replay buffers (``Trainer.check_env``)."""
    finished = (files.out / "runs.csv").exists() and files.config.exists()

    def own_interval(saved: dict[str, Any]) -> ResolvedTrainConfig:
        # Unless given, the metrics interval (derived from --steps) stays the run's own,
        # also when --steps grows to extend it.
        if config.bias_every is None:
            return dataclasses.replace(cfg, bias_every=saved["bias_every"])
        return cfg

    if resume and finished:
        saved = _read_options(files.config)
        cfg = own_interval(saved)
        if same_options(saved, json.loads(cfg.result_key())):
            return read_tables(files.out, "--out")
        finished_steps = saved["steps"]
    state = None
    if resume and files.checkpoint.exists():
        state, saved = _read_checkpoint(files.checkpoint)
        cfg = own_interval(saved)
        check_resumable(saved, cfg, int(state["step"]))
        _warn_if_moved(state.get("platform"), files.checkpoint, threads)
        if finished and cfg.steps < finished_steps:  # an older checkpoint (--checkpoint-every 0)
            raise UsageError(
                f"--steps: the run in --out finished at {finished_steps:,} steps; give at "
                "least that (only --steps may grow, to extend it), or use another --out"
            )
    elif resume and finished:  # saved, cfg: as read above; options differ
        check_resumable(saved, cfg, saved["steps"])  # names them, or a shorter --steps
        raise UsageError(
            f"--steps: extending the run in --out from {saved['steps']:,} steps needs its "
            "checkpoint (checkpoint/state.pt), which it does not have (e.g. a published "
            "run, or one trained with --checkpoint-every 0); train a new run in another --out"
        )
    # Memory and disk: now, not when they run out (a finished run read back takes neither).
    warn_about_size(cfg, need, files.out, stacklevel=4)
    with torch_threads(threads):  # the caller's count back on every way out
        return _train_with(cfg, writer_class, files, state, progress, stop_after)


def _train_with(
    cfg: ResolvedTrainConfig,
    writer_class: Any,
    files: _RunFiles,
    state: dict[str, Any] | None,
    progress: bool,
    stop_after: int | None,
) -> dict[str, pd.DataFrame]:
    """Train (from the checkpoint ``state`` if not None), test and write the tables: the
    part of ``_train_in`` that runs on the run's torch threads."""
    out_dir, ckpt_dir = files.out, files.checkpoint_dir
    # The step of the checkpoint in ckpt_dir, told to the caller on an interrupt.
    on_disk = None if state is None else int(state["step"])
    stop_error: OSError | None = None  # why the stop's own checkpoint could not be written
    trainer = Trainer(cfg)
    bar = None  # closed on every way out: an interrupt left it to push the next call's down
    try:
        if state is not None:
            try:
                trainer.load_state_dict(state)
            except UsageError:
                raise
            except RESTORE_ERRORS as err:  # a key missing, a tensor of another shape, ...
                raise _damaged_checkpoint(files.checkpoint, err) from None
            # Copied into the trainer: emptied, as the callers hold it too, so the run does
            # not keep a second copy of the replay buffers (GBs for MinAtar) to its end.
            state.clear()
        # Only now that the run can start: a finished run is replaced or extended (its
        # figure too: it would show the old run beside the new tables).
        # An optional table of an earlier run would be read back with this one.
        optional = (f"{name}.csv" for name in OPTIONAL_TABLES)
        for name in ("runs.csv", MODEL_FILE, SOFTWARE_FILE, *FIGURE_FILES, *optional):
            (out_dir / name).unlink(missing_ok=True)
        _remove_stale_temporaries(out_dir)
        # The run's resolved options, there while it trains (runs.csv marks it finished).
        # Synced, as the tables are: runs.csv, on disk after a crash, needs them.
        config_text = json.dumps(json.loads(cfg.result_key()), indent=2)
        atomic_write_bytes(files.config, config_text.encode())
        trainer.note_software()  # on the run's torch threads (torch_threads)
        if cfg.tensorboard:
            trainer.open_writer(writer_class, out_dir / "tensorboard")
        bar = progress_bar(
            total=cfg.steps,
            initial=trainer.step,
            enabled=progress,
            desc=f"{cfg.agent} {cfg.env_id}",
            unit="step",
        )
        every = max(1, cfg.steps // 200)  # progress.json: 0.5% steps, for watchers
        report = ProgressReport(out_dir, cfg.steps, trainer.step, bar)
        if on_disk is not None:  # resumed: the last report was of the run before, later
            # than its checkpoint maybe, with a speed and time left of then: its step now
            report.write(trainer.step, trainer.rows, trainer.active.tolist(), list(cfg.seeds))
        k = cfg.checkpoint_every
        with StepBoundary() as boundary:  # Ctrl-C and SIGTERM act between steps
            while trainer.step < cfg.steps and trainer.active.any():
                trainer.train_step()
                bar.update(1)
                if trainer.step % every == 0:
                    active = trainer.active.tolist()
                    report.write(trainer.step, trainer.rows, active, list(cfg.seeds))
                if (k and trainer.step % k == 0) or trainer.step == stop_after:
                    trainer.save_checkpoint(ckpt_dir)
                    on_disk = trainer.step
                if trainer.step == stop_after:
                    bar.close()
                    return {}
                if boundary.requested:  # a checkpoint of this step, then stop as asked
                    if k and on_disk != trainer.step:  # a second Ctrl-C cuts it short
                        try:
                            trainer.save_checkpoint(ckpt_dir)
                            on_disk = trainer.step
                        except OSError as err:  # a full disk: stop still, on the last one
                            stop_error = err
                    boundary.deliver()
            bar.close()
            if k and on_disk != trainer.step:  # the last step's (a signal now: after it)
                trainer.save_checkpoint(ckpt_dir)
                on_disk = trainer.step
        trainer.log_final_metrics()
        trainer.evaluate(progress)
        tables = trainer.tables()
        status = tables["runs"]["status"].tolist()
        save_model(out_dir / MODEL_FILE, cfg, trainer.learner.online, trainer.obs_shape, status)
    except KeyboardInterrupt as err:  # where --resume will continue (maxminq train says it)
        err.checkpoint_step = on_disk  # type: ignore[attr-defined]
        err.checkpoint_error = stop_error  # type: ignore[attr-defined]
        if not err.args:  # a notebook shows the bare "KeyboardInterrupt": say where it is
            err.args = (_interrupted_note(out_dir, on_disk, cfg.steps),)
        raise
    finally:
        if bar is not None:
            bar.close()
        trainer.close()
    # runs.csv last: it marks completion, so the tables before it are on disk first (synced).
    software = json.dumps(trainer.software, indent=2) + "\n"
    atomic_write_bytes(out_dir / SOFTWARE_FILE, software.encode())
    for name in sorted(tables, key=lambda k: k == "runs"):
        data = tables[name].to_csv(index=False, lineterminator="\n").encode()
        atomic_write_bytes(out_dir / f"{name}.csv", data)
    (out_dir / PROGRESS_FILE).unlink(missing_ok=True)
    trainer.cut_check.end(trainer.rows["episodes"])  # after the files: a warning may raise
    return tables
