"""Trained agents as policies: the final networks of a ``maxminq train`` run, loaded back.

``run_training`` writes ``OUT/model.pt`` when it finishes: the online networks of every
seed (what the agents act with), the run's resolved options and a SHA-256 of both (checked
on loading, when there: torch checks none), read back with
``torch.load(weights_only=True)``. ``load_agent(OUT)`` returns a ``TrainedAgent`` that
gives each seed's action values and eps-greedy actions for new observations, with the same
combined values as the behaviour policy (min over the N nets for Maxmin DQN, their mean
for Ensemble DQN and for Generalized DQN with a G of one's own, which acting does not need
to import: ``deep.agents.acting_operator``)::

    agent = load_agent("runs/lunar-maxmin")
    env = agent.config.make_env()  # the run's env id, episode cap and env keywords
    obs, _ = env.reset(seed=0)
    action = agent.act(obs, seed=agent.seeds[0])

``evaluate_agent`` plays whole episodes with it (``maxminq evaluate`` on the command line).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pathlib
import pickle
from collections.abc import Iterator, Sequence
from typing import IO, Any, NoReturn, cast

import gymnasium as gym
import numpy as np
import pandas as pd
import torch

from maxminq._progress import progress_bar
from maxminq.deep.agents import ValuesNotFinite, behaviour_values, policy_action
from maxminq.deep.config import TrainConfig
from maxminq.deep.nets import StackedNet, build_net
from maxminq.envs.registry import space_text
from maxminq.errors import UsageError, is_whole, one_line
from maxminq.experiments.store import atomic_write

__all__ = [
    "MODEL_FILE",
    "TrainedAgent",
    "evaluate_agent",
    "load_agent",
    "check_run_folder",
    "save_model",
    "state_digest",
    "torch_threads",
]

MODEL_FILE = "model.pt"
_FORMAT = 1
# What restoring a saved state of another layout raises (a key missing, a tensor of another
# shape), and what reading a damaged or foreign torch file raises besides (model.pt here,
# checkpoint/state.pt in deep.run_folder). UsageError, a ValueError, is re-raised as it is.
RESTORE_ERRORS: tuple[type[Exception], ...] = (KeyError, IndexError, TypeError, ValueError)
RESTORE_ERRORS += (RuntimeError, AttributeError)
DAMAGED_FILE_ERRORS: tuple[type[Exception], ...] = (*RESTORE_ERRORS, EOFError, OSError)
DAMAGED_FILE_ERRORS += (pickle.UnpicklingError,)


def describe_error(err: BaseException) -> str:
    """``Type: message`` of ``err`` on one line, at most 200 characters (for a one-line
    error that says why a file could not be read)."""
    return one_line(f"{type(err).__name__}: {err}")[:200]


def save_model(
    path: pathlib.Path,
    config: TrainConfig,
    online: StackedNet,
    obs_shape: tuple[int, ...],
    status: list[str],
) -> None:
    """Write the online networks and the resolved options to ``path``, atomically."""
    key, weights = config.result_key(), online.flat.clone()
    state: dict[str, Any] = {
        "format": _FORMAT,
        "config": key,
        "obs_shape": list(obs_shape),
        "n_actions": online.n_actions,
        "status": list(status),
        "online": weights,
        "sha256": _digest(key, weights),
    }
    atomic_write(path, lambda tmp: torch_save(state, tmp))


def _digest(config: str, online: torch.Tensor) -> str:
    """SHA-256 of a model's options and networks: torch.load checks no checksum, so bytes
    damaged inside the networks would load as other (wrong) weights. Not
    :func:`state_digest` (which came later, for checkpoints, and hashes other bytes): the
    model.pt files written since, two published runs' among them, must keep verifying."""
    h = hashlib.sha256(config.encode())
    h.update(online.detach().contiguous().numpy().tobytes())
    return h.hexdigest()


def state_digest(state: dict[str, Any]) -> str:
    """SHA-256 of a saved state (what ``checkpoint/state.pt`` holds: nested dicts, lists and
    tuples of tensors and plain Python values), its own ``sha256`` entry left out. As for
    ``model.pt`` (:func:`_digest`): torch.load checks no checksum, so a byte flipped inside
    a checkpoint that still unpickles would resume with other numbers. Computed on the
    values, not the file's bytes, so the state read back with
    ``torch.load(weights_only=True)`` gives the digest it was saved with."""
    h = hashlib.sha256()
    _feed(h, {k: v for k, v in state.items() if k != "sha256"})
    return h.hexdigest()


def _feed(h: Any, value: Any) -> None:
    """Add ``value`` to the hash ``h``, tagged with its type and size so that no two
    different states feed the same bytes (dict keys in sorted order)."""
    if isinstance(value, torch.Tensor):
        array = np.ascontiguousarray(value.detach().cpu().numpy())
        h.update(f"T{array.dtype.str}{array.shape};".encode())
        h.update(array)  # no copy: gigabytes of replay buffers for MinAtar
    elif isinstance(value, dict):
        h.update(f"D{len(value)};".encode())
        for key in sorted(value, key=repr):
            h.update(f"{key!r}:".encode())
            _feed(h, value[key])
    elif isinstance(value, list | tuple) and any(
        isinstance(v, torch.Tensor | dict | list | tuple) for v in value
    ):
        h.update(f"{type(value).__name__}{len(value)};".encode())
        for item in value:
            _feed(h, item)
    else:  # a plain value, or a list of them (one repr: episodes' actions, table rows)
        h.update(f"{type(value).__name__}:{value!r};".encode())


def torch_save(obj: Any, path: pathlib.Path) -> None:
    """``torch.save`` through a file object: the archive's inner folder is then always
    ``archive``, not the (random) temporary file's name, so the same run writes the same
    bytes. Synced to disk before ``atomic_write`` renames it into place: after a crash of
    the machine (not only of the process) a checkpoint is then the old one or the new one
    whole, never a file of the right name cut short."""
    with open(path, "wb") as f:
        writes = _KeptWriteError(f)
        try:
            torch.save(obj, cast("IO[bytes]", writes))  # it calls write() only
        except RuntimeError:  # torch's 'unexpected pos': raise what write() raised instead
            if writes.error is not None:
                raise writes.error from None
            raise
        f.flush()
        os.fsync(f.fileno())


class _KeptWriteError:
    """A file's ``write`` as ``torch.save`` calls it, keeping what it raises: ``torch.save``
    turns an exception raised there (an OSError of a full disk, the KeyboardInterrupt of a
    Ctrl-C that arrives while it writes) into a RuntimeError ('unexpected pos')."""

    def __init__(self, f: Any) -> None:
        self.f = f
        self.error: BaseException | None = None

    def write(self, data: Any) -> int:
        """Write ``data`` to the file (what it raises is kept, then raised)."""
        try:
            return int(self.f.write(data))
        except BaseException as err:
            self.error = err
            raise

    def flush(self) -> None:
        """Flush the file."""
        self.f.flush()


@contextlib.contextmanager
def torch_threads(threads: int) -> Iterator[None]:
    """Run the block on ``threads`` torch threads, then restore the caller's setting, also
    when the block raises (a KeyboardInterrupt too): the one place training
    (``run_training(threads=...)``) and the policies (:func:`one_torch_thread`) change
    torch's process-wide thread count."""
    saved = torch.get_num_threads()
    if saved == threads:
        yield
        return
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(saved)


def one_torch_thread() -> contextlib.AbstractContextManager[None]:
    """Run the block on one torch thread, then restore the caller's setting. A policy's
    networks are small: a forward pass of one observation (or a few) has nothing to split,
    and torch's default of one thread per core made one action of LunarLander's Maxmin
    N = 3 take 4 to 23 ms instead of 0.1 ms here (2 cores, busy), as the threads wait for
    each other; training runs on one thread by default for the same reason."""
    return torch_threads(1)


# What to do when no seed of a run can act (each diverged): the run's runs.csv has the step.
_NONE_CAN_ACT = (
    "no seed of this run can (every one diverged, at the step in its runs.csv): train it "
    "again, e.g. with a smaller --lr"
)


class TrainedAgent:
    """The final policies of one training run (one per seed), ready to act.

    Attributes:
        config: the run's resolved ``TrainConfig``.
        seeds: the run's seeds; ``status[k]`` is ``'done'`` or ``'diverged'`` for seed
            ``seeds[k]`` (a diverged seed's networks hold NaN/inf and cannot act).
    """

    def __init__(self, state: dict[str, Any]) -> None:
        """The agent held by ``state``, a ``model.pt`` as read back by :func:`load_agent`
        (UsageError if its networks do not have the sizes its options name)."""
        self.config = TrainConfig.from_key(state["config"])
        self.seeds: list[int] = list(self.config.seeds)
        self.status: list[str] = list(state["status"])
        self.obs_shape = tuple(int(d) for d in state["obs_shape"])
        self.n_actions = int(state["n_actions"])
        self.n_online = self.config.n_online
        n, online = self.n_online, state["online"]
        c = self.config
        self._nets = [  # one stack of n_online members per seed
            build_net(c.network, n, self.obs_shape, self.n_actions, c.hidden) for _ in self.seeds
        ]
        if tuple(online.shape) != (len(self.seeds) * n, self._nets[0].n_params):
            raise UsageError("RUN_DIR: model.pt does not hold the networks its options name")
        for k, net in enumerate(self._nets):
            net.flat.copy_(online[k * n : (k + 1) * n])

    def __repr__(self) -> str:
        """The run's agent (and generalized-dqn's operator), N, environment, steps, seeds and
        their status."""
        c = self.config
        op = "" if c.operator is None else f", operator={c.operator!r}"
        return (
            f"TrainedAgent(agent={c.agent!r}{op}, n={c.n}, env_id={c.env_id!r}, "
            f"steps={c.steps}, seeds={self.seeds}, status={self.status})"
        )

    def _position(self, seed: int | None) -> int:
        if seed is None:  # one seed's run (the default --seeds 0): that seed
            if len(self.seeds) != 1:
                raise UsageError(
                    f"--seeds: this run trained seeds {self.seeds}; say which one acts, "
                    f"e.g. seed={self.seeds[0]}"
                )
            seed = self.seeds[0]
        if not is_whole(seed) or seed not in self.seeds:  # True == 1 acted as seed 1
            shown = int(seed) if is_whole(seed) else repr(seed)
            raise UsageError(f"--seeds: this run trained seeds {self.seeds}, not {shown}")
        k = self.seeds.index(seed)
        if self.status[k] != "done":
            can = [str(s) for s, st in zip(self.seeds, self.status, strict=True) if st == "done"]
            raise UsageError(
                f"--seeds: seed {seed} diverged during training and cannot act; "
                + (f"give one that can: {', '.join(can)}" if can else _NONE_CAN_ACT)
            )
        return k

    def q_values(self, obs: np.ndarray, seed: int | None = None) -> np.ndarray:
        """The action values seed ``seed``'s policy is greedy on: (A,) for one observation,
        (B, A) for a batch of B observations (B, *obs_shape). ``seed`` may be left out for a
        run of one seed (a UsageError otherwise).

        Raises:
            ValueError: ``obs`` has neither shape or is no array of numbers (the
                ``(observation, info)`` pair of ``env.reset()`` is named as such).
        """
        return self._q_values(obs, seed, "q_values")

    def _q_values(self, obs: np.ndarray, seed: int | None, caller: str) -> np.ndarray:
        """:meth:`q_values`, its shape error naming ``caller`` (``act`` calls it too)."""
        net = self._nets[self._position(seed)]
        if isinstance(obs, tuple) and len(obs) == 2 and isinstance(obs[1], dict):
            raise ValueError(
                f"{caller}: obs is the (observation, info) pair env.reset() returns; give the "
                "observation: obs, info = env.reset(...)"
            )
        try:
            x = np.asarray(obs, dtype=np.float32)
        except (TypeError, ValueError) as err:  # a dict, a string, rows of other lengths
            raise ValueError(
                f"{caller}: obs is not an array of numbers ({one_line(err)}); expected shape "
                f"{self.obs_shape} (one observation) or (B, "
                f"{', '.join(map(str, self.obs_shape))}) (a batch)"
            ) from None
        one = x.shape == self.obs_shape
        if not one and x.shape[1:] != self.obs_shape:
            raise ValueError(
                f"{caller}: obs has shape {x.shape}; expected {self.obs_shape} (one "
                f"observation) or (B, {', '.join(map(str, self.obs_shape))}) (a batch)"
            )
        if x.size == 0:  # an empty batch (the stacked forward cannot reshape 0 rows)
            return np.zeros((0, self.n_actions), np.float32)
        batch = torch.from_numpy(x.reshape(-1, *self.obs_shape))[None]  # (1, B, *obs_shape)
        with one_torch_thread():
            c = self.config
            q = behaviour_values(c.agent, net, self.n_online, batch, c.operator)[0].numpy()
        return q[0] if one else q

    def act(
        self,
        obs: np.ndarray,
        seed: int | None = None,
        eps: float = 0.0,
        rng: np.random.Generator | None = None,
    ) -> int | np.ndarray:
        """An eps-greedy action of seed ``seed``'s policy (greedy when ``eps`` = 0; ties go
        to the lowest action, as in training), a Python int as ``env.step`` takes it; for a
        batch of B observations (B, *obs_shape), an int64 array of B actions (a vector
        environment's ``step`` takes it), each drawn as for one observation in turn.
        ``seed`` may be left out for a run of one seed (as SB3's ``model.predict(obs)``);
        ``rng`` is needed when ``eps`` > 0.

        Raises:
            ValueError: ``eps`` is not a number in [0, 1] (2, -1 or NaN would silently act
                greedily or always at random), or is > 0 without ``rng``; ``obs`` holds
                NaN or inf, is not numbers of one of :meth:`q_values`' shapes, or is the
                ``(observation, info)`` pair of ``env.reset()``.
            UsageError: the seed's action values at ``obs`` are not all finite (its
                networks hold NaN, or the values overflow): no action is honest.
        """
        if not _probability(eps):
            raise ValueError(f"act: eps must be a number in [0, 1], got {eps!r}")
        if eps > 0.0 and not isinstance(rng, np.random.Generator):  # rng=0 raised deep inside
            raise ValueError(f"act: eps > 0 needs an np.random.Generator rng, got {rng!r}")
        q = self._q_values(obs, seed, "act")
        k = self._position(seed)
        try:  # training's test episodes act through the same checks (deep.agents)
            return policy_action(q, self._nets[k].flat, eps, rng if eps > 0.0 else None)
        except ValuesNotFinite as err:
            self._refuse_non_finite(obs, k, err)

    def _refuse_non_finite(self, obs: np.ndarray, k: int, err: ValuesNotFinite) -> NoReturn:
        """The one-line error of :meth:`act` when the values of seed ``seeds[k]`` at ``obs``
        are not all finite (``err``, from ``deep.agents.policy_action``): no greedy action
        can be read from them. It names the cause: ``obs`` holds NaN or inf (a ValueError),
        the seed's networks do (a model whose seed diverged unrecorded: a UsageError), or
        the values overflow float32 at this observation (a UsageError)."""
        x = np.asarray(obs, dtype=np.float64)
        if not np.isfinite(x).all():
            bad = x[~np.isfinite(x)].flat[0]
            raise ValueError(f"act: obs holds {bad}; give a finite observation")
        who = f"seed {self.seeds[k]}"
        if err.networks:
            raise UsageError(
                f"--seeds: {who}'s networks hold NaN or inf (it diverged, though model.pt "
                "records it as done); it cannot act: train the run again or use another seed"
            )
        raise UsageError(
            f"--seeds: {who}'s action values at this observation are not finite "
            f"({err.value}: beyond float32, e.g. an observation far outside those it trained "
            "on); no greedy action can be chosen there"
        )


def load_agent(run_dir: str | pathlib.Path) -> TrainedAgent:
    """The trained agent of a finished ``maxminq train`` run folder (its ``model.pt``).

    The folder is checked as ``maxminq evaluate`` checks RUN_DIR (:func:`check_run_folder`):
    one that is not such a run is a one-line UsageError starting ``RUN_DIR:`` that says what
    it is (a run still training, a run's ``checkpoint/``, a sweep's folder or tabular run, a
    folder of run folders, ...) and what to give instead."""
    run = check_run_folder(run_dir)  # also None, a number, bytes or '' (the current folder)
    path = run / MODEL_FILE
    if not path.is_file():
        if (run / "runs.csv").is_file():  # written after model.pt: the file was lost since
            raise UsageError(
                f"RUN_DIR: {path} not found, though the run finished (runs.csv is there): it "
                "was left out of a copy or deleted; copy it again, or train the run again "
                "(--overwrite); plot and compare read the run without it"
            )
        raise UsageError(
            f"RUN_DIR: {path} not found; it is written when 'maxminq train' finishes a run"
        )
    try:
        state = torch.load(path, weights_only=True)
        if not isinstance(state, dict):
            raise TypeError(f"it holds a {type(state).__name__}, not a model")
        if state.get("format") != _FORMAT:
            raise UsageError(f"RUN_DIR: {path} has an unknown format {state.get('format')!r}")
        # Models written before the checksum existed have none (the published runs' too).
        if "sha256" in state and state["sha256"] != _digest(state["config"], state["online"]):
            raise ValueError("its contents do not match their checksum")
        return TrainedAgent(state)
    except UsageError:
        raise
    except DAMAGED_FILE_ERRORS as err:  # cut short, not a torch file, or not maxminq's model
        why = describe_error(err)
        raise UsageError(f"RUN_DIR: {path} is damaged or not a maxminq model ({why})") from None


def check_run_folder(run_dir: str | pathlib.Path) -> pathlib.Path:
    """A one-line ``RUN_DIR`` error saying what the folder is when it holds no ``model.pt``
    and cannot hold trained agents: not a run at all
    (:func:`~maxminq.analysis.runs.not_a_run`: a run still training, a run's
    ``checkpoint/``, a sweep's tabular run, a folder of run folders, ...), or a sweep's
    folder or one of its runs' tables, which keep no networks (``--keep-work`` keeps
    them). :func:`load_agent` checks its folder so, for ``maxminq evaluate`` and Python
    alike. ``run_dir`` not a ``str`` or path, or ``''``, is a UsageError naming RUN_DIR too.
    Returns the folder as a path."""
    from maxminq.analysis.runs import as_path, check_run_dirs

    run = as_path(run_dir, "RUN_DIR")
    if (run / MODEL_FILE).is_file():  # all it needs: a run training or stopped has none
        return run  # (beside config.json alone too: the files one copies to share an agent)
    check_run_dirs([run], "evaluate")
    keep = "'maxminq sweep --keep-work' keeps them (with model.pt) in OUT/work/<run_id>"
    if (run / "results.sqlite").is_file():
        raise UsageError(
            f"RUN_DIR: {run} is a sweep folder; a sweep keeps its runs' tables, not their "
            f"networks: {keep}"
        )
    if (run / "manifest.json").is_file() and (run / "runs.csv").is_file():
        work = run.parent.parent / "work" / run.name
        raise UsageError(
            f"RUN_DIR: {run} holds a sweep run's tables, not its networks: {keep}, here "
            f"{work}; plot and compare read the tables"
        )
    return run  # no model.pt: load_agent then names the missing file


def _check_spaces(agent: TrainedAgent, env: Any) -> None:
    """UsageError naming RUN_DIR unless ``env`` still has the observation shape and the
    number of actions the run's networks were built for: one's own environment may have
    changed since training (a traceback in the first step, or actions the networks never
    learned played silently)."""
    c = agent.config
    shape = getattr(env.observation_space, "shape", None)
    space = env.action_space
    if shape is not None and tuple(shape) != agent.obs_shape:
        what = f"observations of shape {tuple(shape)} (the run's networks read {agent.obs_shape})"
    elif not (isinstance(space, gym.spaces.Discrete) and int(space.start) == 0):
        what = (
            f"the action space {space_text(space)} (the run's networks act with "
            f"Discrete({agent.n_actions}))"
        )
    elif int(space.n) != agent.n_actions:
        what = f"{int(space.n)} actions (the run's networks value {agent.n_actions})"
    else:
        return
    raise UsageError(
        f"RUN_DIR: the run's environment {c.env_id} now gives {what}: it changed since training"
    )


def _probability(value: Any) -> bool:
    """Whether ``value`` is a real number (not a bool) in [0, 1]; NaN is not."""
    real = isinstance(value, (int, float, np.integer, np.floating))
    return real and not isinstance(value, (bool, np.bool_)) and 0.0 <= value <= 1.0


def _check_play_options(
    seeds: Any,
    episodes: Any,
    eps: Any,
    env_seed: Any,
    max_episode_steps: Any = None,
    frames: Any = None,
    max_frames: Any = 1,
) -> None:
    """UsageError naming the option of ``maxminq evaluate`` unless ``evaluate_agent``'s
    arguments are what the command accepts (from Python, ``episodes=0`` returned an empty
    table and ``episodes="3"`` or ``seeds=0`` raised a TypeError naming nothing;
    ``max_episode_steps=0`` a ValueError of Gymnasium's naming no option), and ``frames``
    and ``max_frames`` (no option of the command: named as the arguments) what it passes
    (``frames=()`` raised an AttributeError once the first episode had begun, and
    ``max_frames=0`` recorded nothing, silently)."""
    if isinstance(seeds, (str, bytes)) or not hasattr(seeds, "__len__"):
        raise UsageError(f"--seeds: expected a list of the run's seeds, got {seeds!r}")
    if len(seeds) == 0:
        raise UsageError("--seeds: give at least one of the run's seeds")
    odd = [s for s in seeds if not is_whole(s)]  # True played seed 1; 1.0 a TypeError
    if odd:
        raise UsageError(f"--seeds: expected the run's seeds as whole numbers, got {odd[0]!r}")
    if not is_whole(episodes) or episodes < 1:
        raise UsageError(f"--episodes: expected a whole number >= 1, got {episodes!r}")
    if not _probability(eps):
        raise UsageError(f"--eps: expected a probability in [0, 1], got {eps!r}")
    if not is_whole(env_seed) or env_seed < 0:
        raise UsageError(f"--env-seed: expected a whole number >= 0, got {env_seed!r}")
    if max_episode_steps is not None and (not is_whole(max_episode_steps) or max_episode_steps < 1):
        raise UsageError(
            "--max-episode-steps: expected a whole number >= 1 (or None: the run's cap), "
            f"got {max_episode_steps!r}"
        )
    if frames is not None and not isinstance(frames, list):
        raise UsageError(
            "frames: expected a list to record the frames in (or None), got "
            f"{type(frames).__name__}"
        )
    if not is_whole(max_frames) or max_frames < 1:
        raise UsageError(f"max_frames: expected a whole number >= 1, got {max_frames!r}")


def evaluate_agent(
    agent: TrainedAgent,
    seeds: Sequence[int] | None = None,
    episodes: int = 10,
    eps: float = 0.0,
    env_seed: int = 0,
    progress: bool = False,
    frames: list[np.ndarray] | None = None,
    max_frames: int = 2000,
    max_episode_steps: int | None = None,
) -> pd.DataFrame:
    """Play ``episodes`` episodes (default 10) with each of ``seeds``' policies (default:
    every seed that finished training, as ``maxminq evaluate``); one row per episode
    (seed, episode, return, length, terminated, truncated, q_first, discounted_return):
    ``q_first`` is the policy's own value of its first action, Q(s_0, a_0) (min over the N
    nets for Maxmin DQN), and ``discounted_return`` the return it then obtained, discounted
    with the run's gamma, so their difference is the estimation bias at the start state
    (of the policy played: greedy with ``eps`` = 0; for a truncated episode off by the
    missing tail, which ``maxminq evaluate`` drops unless it weighs gamma^length <= 0.05).

    Episode j of every policy starts from ``reset(seed=env_seed + j)`` and the eps draws
    come from ``np.random.default_rng([env_seed, seed])``, so policies meet the same start
    states and a call is reproducible. With a ``frames`` list, the first policy's first
    episode is rendered (``render_mode="rgb_array"``) into it: the frame after the reset
    and after each step, at most ``max_frames`` (appended after what the list holds).
    ``max_episode_steps`` caps the episodes (truncation) instead of the run's cap (None
    keeps it; an environment without one, nor a ``TimeLimit`` of its own, plays each
    episode until it ends by itself: an :class:`~maxminq.deep.config.EnvWarning` says so,
    as in training); another names a ``NormalizeObservation`` or ``NormalizeReward``
    wrapper, whose running statistics, saved nowhere, start afresh here (the agent sees
    observations on other scales than it learned on; returns are of rescaled rewards).
    A NaN or infinite observation or reward is a UsageError naming
    ``--env``, as in training's test episodes. A seed unknown, diverged or given twice is
    a UsageError naming ``--seeds``, before any episode; so is no seed at all, and so are
    ``episodes`` (a whole number >= 1), ``eps`` (in [0, 1]), ``env_seed`` (a whole number
    >= 0) and ``max_episode_steps`` (a whole number >= 1, or None) out of range, naming the
    option of ``maxminq evaluate``, and ``agent`` not a :class:`TrainedAgent`, ``frames``
    not a list or ``max_frames`` not a whole number >= 1, naming the argument.
    """
    if not isinstance(agent, TrainedAgent):  # e.g. the run's folder: an AttributeError
        got = one_line(repr(agent))[:100]
        raise UsageError(f"agent: expected the TrainedAgent of load_agent(RUN_DIR), got {got}")
    if seeds is None:  # as maxminq evaluate: every seed that finished training
        seeds = [s for s, st in zip(agent.seeds, agent.status, strict=True) if st == "done"]
        if not seeds:
            raise UsageError(
                "--seeds: every seed of the run diverged (at the step in its runs.csv); "
                "nothing can act: train it again, e.g. with a smaller --lr"
            )
    _check_play_options(seeds, episodes, eps, env_seed, max_episode_steps, frames, max_frames)
    episodes, env_seed = int(episodes), int(env_seed)  # Gymnasium's reset takes Python ints
    if max_episode_steps is not None:  # a NumPy integer: Gymnasium's cap takes a Python int
        max_episode_steps = int(max_episode_steps)
    seeds = [int(s) for s in seeds]
    if len(set(seeds)) != len(seeds):  # a seed twice would count its episodes twice
        raise UsageError(f"--seeds: must be distinct, got {list(seeds)}")
    for seed in seeds:
        agent._position(seed)  # unknown or diverged: error before any episode
    from maxminq.deep.env_checks import (
        warn_if_inner_time_limit,
        warn_if_no_time_limit,
        warn_if_normalized,
    )

    c = agent.config
    kwargs = {"render_mode": "rgb_array"} if frames is not None else {}
    env = c.make_env(max_episode_steps, **kwargs)
    bar = None
    try:  # closed on every way out, an EnvWarning raised as an error too
        _check_spaces(agent, env)
        # As training warns: the cap played (this call's or the run's), or a TimeLimit of
        # the environment's own (its entry point's); an EnvWarning, from Python too.
        cap = c.max_episode_steps if max_episode_steps is None else max_episode_steps
        warn_if_no_time_limit(env, c.env_id, cap)
        warn_if_inner_time_limit(env, c.env_id, cap)
        # As training warns too: statistics across episodes start afresh here.
        warn_if_normalized(env, c.env_id, evaluating=True)
        bar = progress_bar(
            total=len(seeds) * episodes, desc="episodes", unit="ep", enabled=progress
        )
        with one_torch_thread():  # for the whole loop, not once per action
            rows = _play(agent, env, seeds, episodes, eps, env_seed, frames, max_frames, bar)
    finally:
        if bar is not None:
            bar.close()
        env.close()
    columns = ["seed", "episode", "return", "length", "terminated", "truncated"]
    columns += ["q_first", "discounted_return"]
    return pd.DataFrame(rows, columns=columns)


def _play(
    agent: TrainedAgent,
    env: Any,
    seeds: list[int],
    episodes: int,
    eps: float,
    env_seed: int,
    frames: list[np.ndarray] | None,
    max_frames: int,
    bar: Any,
) -> list[list[Any]]:
    """The episodes of :func:`evaluate_agent`, one row each (its columns, in order). A NaN
    or infinite observation or reward is an ``--env`` error, as in training's test
    episodes (``deep.env_checks.episode_observation``)."""
    from maxminq.deep.env_checks import episode_observation

    c = agent.config
    rows = []
    limit = max_frames + (len(frames) if frames is not None else 0)  # new frames: max_frames
    for seed in seeds:
        rng = np.random.default_rng([env_seed, seed])
        for j in range(episodes):
            episode = f"seed {seed}'s episode {j + 1}"
            obs = episode_observation(
                env.reset(seed=env_seed + j)[0], agent.obs_shape, c.env_id, f"{episode}, reset()"
            )
            total, length, term, trunc = 0.0, 0, False, False
            discounted, weight, q_first = 0.0, 1.0, float("nan")
            record = frames is not None and seed == seeds[0] and j == 0
            while True:
                if record and frames is not None and len(frames) < limit:
                    frames.append(env.render())
                if term or trunc:
                    break
                action = agent.act(obs, seed, eps, rng)
                if length == 0:
                    q_first = float(agent.q_values(obs, seed)[action])
                o, r, term, trunc, _ = env.step(action)
                obs = episode_observation(o, agent.obs_shape, c.env_id, f"{episode}, step()", r)
                total += float(r)
                discounted += weight * float(r)
                weight *= c.gamma
                length += 1
            row = [seed, j + 1, total, length, bool(term), bool(trunc), q_first, discounted]
            rows.append(row)
            bar.update(1)
    return rows
