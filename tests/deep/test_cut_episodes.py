"""The warning that episodes cut by the time limit (or by the environment itself) leave the
bias unmeasured: when it comes, its words and counts, and once only."""

from __future__ import annotations

import itertools
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest

from maxminq.cli import main
from maxminq.deep.bias_probes import CutTally, cut_episodes_message
from maxminq.deep.config import EnvWarning, TrainConfig
from maxminq.deep.train import run_training

_SHORT_CORRIDOR = '''
import gymnasium as gym
import numpy as np


class Corridor(gym.Env):
    """The README's Corridor, 3 cells from the middle one: every episode terminates."""

    observation_space = gym.spaces.Box(0.0, 1.0, (3,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos = 1
        return np.eye(3, dtype=np.float32)[self.pos], {}

    def step(self, action):
        self.pos = min(2, max(0, self.pos + (1 if action == 1 else -1)))
        done = self.pos == 2
        return np.eye(3, dtype=np.float32)[self.pos], float(done), done, False, {}


gym.register("ShortCorridor-v0", entry_point=Corridor, max_episode_steps=100)
'''


_OBS = np.array([1.0, 0.0], np.float32)


class _Endless(gym.Env):
    """No episode ends by itself: the registered time limit (10 steps) cuts every one."""

    observation_space = gym.spaces.Box(0.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return _OBS.copy(), {}

    def step(self, action):
        return _OBS.copy(), 0.0, False, False, {}


class _Settling(_Endless):
    """The first three episodes of an instance never end (the 10-step limit cuts them:
    steps 1-30 of a run); every later one terminates at its second step."""

    def reset(self, *, seed=None, options=None):
        self.episodes = getattr(self, "episodes", 0) + 1
        self.t = 0
        return super().reset(seed=seed)

    def step(self, action):
        self.t += 1
        return _OBS.copy(), 0.0, self.episodes > 3 and self.t == 2, False, {}


def _register(entry) -> str:
    env_id = f"mmq-leftovers19/{entry.__name__.strip('_')}-v0"
    if env_id not in gym.registry:
        gym.register(env_id, entry_point=entry, max_episode_steps=10)
    return env_id


def _config(env_id: str, steps: int, learning_starts: int = 20) -> TrainConfig:
    return TrainConfig(
        env_id=env_id,
        agent="dqn",
        steps=steps,
        seeds=[0],
        gamma=0.99,  # a cut probe counts 299+ steps before the cut: none of a 10-step cap
        learning_starts=learning_starts,
        bias_every=20,
        buffer_size=200,
        batch_size=8,
        eval_episodes=0,
        checkpoint_every=0,
    )


def _cut_warnings(caught) -> list[str]:
    return [str(w.message) for w in caught if "only episodes that terminate" in str(w.message)]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_no_cut_episodes_warning_where_episodes_terminate(tmp_path, monkeypatch, capsys) -> None:
    """A cap of 100 at gamma 0.99 (a cut episode's probes never count) on an environment
    whose every episode terminates, as the README's Corridor's nearly all do: no warning,
    and the bias is measured. Before, 'only episodes that terminate give bias numbers' on
    every run, whatever its episodes did."""
    from maxminq.cli import main

    (tmp_path / "short_corridor_mmq.py").write_text(_SHORT_CORRIDOR)
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "run"
    argv = ["train", "--env", "short_corridor_mmq:ShortCorridor-v0", "--agent", "dqn"]
    argv += ["--steps", "300", "--learning-starts", "100", "--bias-every", "300"]
    argv += ["--eval-episodes", "1", "--no-progress", "--no-plot", "--out", str(out)]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "warning" not in err, err
    import pandas as pd

    assert pd.read_csv(out / "episodes.csv")["terminated"].all()
    assert (pd.read_csv(out / "metrics.csv")["bias_n"] > 0).all()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_cut_episodes_warning_says_how_much_was_lost(capsys) -> None:
    """Learning from step 100; the first episode (steps 1-150) was cut, the second (151-200)
    terminated: each held 50 steps since learning started, so about half the probes did not
    count: said with the numbers. All cut: none counted. 10 of 110 steps (9%, under 20%) or
    a cap long enough for a cut episode's probes (299 at gamma 0.99): no warning."""
    import pandas as pd

    from maxminq.commands.train import _warn_if_cut_episodes_give_no_bias

    def episodes(ends: list[int], lengths: list[int], cut: list[bool]) -> pd.DataFrame:
        return pd.DataFrame(
            {"step": ends, "length": lengths, "terminated": [not c for c in cut], "truncated": cut}
        )

    _warn_if_cut_episodes_give_no_bias(
        150, 0.99, 100, episodes([150, 200], [150, 50], [True, False])
    )
    assert capsys.readouterr().err.splitlines() == [
        "maxminq train: warning: --max-episode-steps 150 with --gamma 0.99: only episodes "
        "that terminate give bias numbers (a cut episode's probe counts only 299+ steps "
        "before the cut: gamma^k <= 0.05); it cut 1 of the 2 training episodes, which held "
        "50% of the steps since learning started: about that share of the bias probes did "
        "not count"
    ]
    _warn_if_cut_episodes_give_no_bias(
        150, 0.99, 100, episodes([150, 300], [150, 150], [True, True])
    )
    last = capsys.readouterr().err.strip()
    assert last.endswith("which held 100% of the steps since learning started: no bias probe "
                         "counted"), last  # fmt: skip
    # 10 of 110 steps since learning started in the cut episode: no warning
    _warn_if_cut_episodes_give_no_bias(
        150, 0.99, 100, episodes([110, 210], [110, 100], [True, False])
    )
    # a cap a cut episode's probes can count with (299 at gamma 0.99): none either
    _warn_if_cut_episodes_give_no_bias(
        300, 0.99, 100, episodes([300, 600], [300, 300], [True, True])
    )
    assert capsys.readouterr().err == ""


@pytest.mark.usefixtures("torch_one_thread")
def test_the_cut_episodes_warning_comes_at_the_first_interval_that_settles_it(tmp_path) -> None:
    """200 steps, learning from step 20, every episode cut at 10 steps: the run's episodes
    can hold at most 180 steps since learning started, 20% of which is 36. By step 40 the
    cut episodes hold 20 (those ending at 30 and 40), by step 60 40 >= 36: the warning comes
    at the interval of step 60 with the numbers so far (6 episodes ended, 100%), and the
    end adds the whole run's (20 episodes). Before, run_training never warned (only
    maxminq train, after the run)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tables = run_training(_config(_register(_Endless), 200), tmp_path / "run", progress=False)
    early, end = _cut_warnings(caught)
    assert "; by step 60 of 200 it cut 6 of the 6 training episodes, which held 100% of " in early
    assert "no bias probe counted; bias_mean, bias_std and bias_abs leave them out" in early
    assert "20% or more of the run's steps since learning started" in early
    assert end.startswith("--max-episode-steps 10 with --gamma 0.99: only episodes that ")
    assert end.endswith(
        "; in all it cut 20 of the 20 training episodes, which held 100% of the steps since "
        "learning started: no bias probe counted"
    )
    assert [w.category.__name__ for w in caught if str(w.message) in (early, end)] == [
        "CutEpisodesWarning"
    ] * 2
    assert all(issubclass(w.category, EnvWarning) for w in caught if str(w.message) == end)
    assert (tables["metrics"]["bias_n"] == 0).all()  # as said: no probe counted


@pytest.mark.usefixtures("torch_one_thread")
def test_the_end_says_nothing_the_early_warning_said(tmp_path) -> None:
    """45 steps: settled at step 40 (20 cut steps of at most 25 since learning started),
    and no episode ends after it (the next would at 50): one warning, not the same twice."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run_training(_config(_register(_Endless), 45), tmp_path / "run", progress=False)
    (only,) = _cut_warnings(caught)
    assert "; by step 40 of 45 it cut 4 of the 4 training episodes, which held 100%" in only


@pytest.mark.usefixtures("torch_one_thread")
def test_no_cut_episodes_warning_where_the_cut_ones_are_the_first_few(tmp_path) -> None:
    """The first 30 of 200 steps are in three cut episodes, then every episode terminates:
    15% in all, under 20%, so no warning, neither at the end nor early, although the share
    so far was 100% at step 20 and 75% at step 40 (the first episodes, of a random policy,
    are the ones a cap cuts: the README's Corridor)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cfg = _config(_register(_Settling), 200, learning_starts=0)
        tables = run_training(cfg, tmp_path / "run", progress=False)
    episodes = tables["episodes"]
    assert episodes["truncated"].sum() == 3 and episodes["terminated"].sum() == 85
    assert _cut_warnings(caught) == []


@pytest.mark.usefixtures("torch_one_thread")
def test_maxminq_train_warns_early_once_then_in_all_and_reading_back_once(tmp_path, capsys) -> None:
    """The command shows the early warning on a line of its own (the progress bar cleared
    first, not ``...step/s]maxminq train: warning``), the end's once (it printed its own
    besides before), and a finished run read back (--resume) its summary once."""
    out = tmp_path / "run"
    argv = ["train", "--env", _register(_Endless), "--agent", "dqn", "--steps", "200"]
    argv += ["--seeds", "0", "--gamma", "0.99", "--learning-starts", "20", "--bias-every", "20"]
    argv += ["--buffer-size", "200", "--batch-size", "8", "--eval-episodes", "0"]
    argv += ["--checkpoint-every", "0", "--no-plot", "--out", str(out)]
    assert main(argv) == 0
    err = capsys.readouterr().err
    said = "maxminq train: warning: --max-episode-steps 10 with --gamma 0.99: only episodes"
    assert err.count(said) == 2
    first = err.index(said)
    assert err[first - 1] in "\r\n", err[first - 40 : first + 10]  # not after the bar
    assert "by step 60 of 200 it cut 6 of the 6" in err[first:].splitlines()[0]
    assert "; in all it cut 20 of the 20 training episodes" in err[first + 1 :]
    assert main([*argv, "--resume", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert err.count(said) == 1
    assert "; it cut 20 of the 20 training episodes, which held 100% of the steps" in err


def test_the_self_cut_count_says_the_cut_ones_were_short_not_all_of_them() -> None:
    why = "a cut episode's probe counts only 299+ steps before the cut: gamma^k <= 0.05"
    got = cut_episodes_message(None, 0.99, why, CutTally(3, 4, 1200, 1500), "in all")
    assert "; in all it cut 3 of the 4 training episodes in fewer than 299 steps, which " in got
    assert "shorter than" not in got
    # the cap's words are as they were: every cut episode counts there
    assert cut_episodes_message(200, 0.99, "w", CutTally(1, 2, 5, 10), "in all") == (
        "--max-episode-steps 200 with --gamma 0.99: only episodes that terminate give bias "
        "numbers (w); in all it cut 1 of the 2 training episodes, which held 50% of the "
        "steps since learning started: about that share of the bias probes did not count"
    )


def test_the_self_cut_warning_word_for_word():
    """No cap, gamma 0.99 (k = 299): the tally's episodes are those shorter than k."""
    why = "a cut episode's probe counts only 299+ steps before the cut: gamma^k <= 0.05"
    got = cut_episodes_message(None, 0.99, why, CutTally(3, 4, 1200, 1500), "by step 60 of 200")
    assert got == (
        "episodes the environment cuts itself (truncated=True; no --max-episode-steps) with "
        "--gamma 0.99: only episodes that terminate, or that are cut 299+ steps in, give bias "
        "numbers (a cut episode's probe counts only 299+ steps before the cut: gamma^k <= "
        "0.05); by step 60 of 200 it cut 3 of the 4 training episodes in fewer than 299 steps, "
        "which held 80% of the steps since learning started: about that share of the bias "
        "probes did not count"
    )


def test_the_self_cut_warning_at_gamma_1_and_without_numbers_and_with_a_cap():
    """At gamma 1 no length counts (no 'shorter than'); without a tally no numbers; with a
    cap the cap's words, unchanged."""
    why1 = "with gamma 1 a cut episode's probes never count"
    assert cut_episodes_message(None, 1.0, why1, CutTally(2, 2, 1000, 1000)) == (
        "episodes the environment cuts itself (truncated=True; no --max-episode-steps) with "
        "--gamma 1.0: only episodes that terminate give bias numbers (with gamma 1 a cut "
        "episode's probes never count); it cut 2 of the 2 training episodes, which held 100% "
        "of the steps since learning started: no bias probe counted"
    )
    assert cut_episodes_message(None, 0.9, "w", None) == (
        "episodes the environment cuts itself (truncated=True; no --max-episode-steps) with "
        "--gamma 0.9: only episodes that terminate, or that are cut 29+ steps in, give bias "
        "numbers (w)"
    )
    assert cut_episodes_message(200, 0.99, "w", CutTally(1, 1, 5, 5), "in all") == (
        "--max-episode-steps 200 with --gamma 0.99: only episodes that terminate give bias "
        "numbers (w); in all it cut 1 of the 1 training episodes, which held 100% of the "
        "steps since learning started: no bias probe counted"
    )


def test_a_self_cut_run_read_back_is_warned_of_as_in_training(capsys):
    """cc3ccec warned of an environment cutting its own episodes shorter than the horizon
    while training, but a finished run read back ('maxminq train ... --resume') said
    nothing of it, where a short cap's run read back is warned of. Cut episodes of 400
    steps (>= k = 299 at gamma 0.99) are not counted; without episodes, nothing is said."""
    import pandas as pd

    from maxminq.commands.train import _warn_if_cut_episodes_give_no_bias as warn

    def episodes(lengths: list[int]) -> pd.DataFrame:
        ends = list(itertools.accumulate(lengths))
        cut = [True] * len(lengths)
        return pd.DataFrame(
            {"step": ends, "length": lengths, "terminated": [False] * len(cut), "truncated": cut}
        )

    warn(None, 0.99, 0, episodes([5, 5, 5, 5]))
    assert capsys.readouterr().err.splitlines() == [
        "maxminq train: warning: episodes the environment cuts itself (truncated=True; no "
        "--max-episode-steps) with --gamma 0.99: only episodes that terminate, or that are cut "
        "299+ steps in, give bias numbers (a cut episode's probe counts only 299+ steps before "
        "the cut: gamma^k <= 0.05); it cut 4 of the 4 training episodes in fewer than 299 "
        "steps, which held 100% of the steps since learning started: no bias probe counted"
    ]
    warn(None, 0.99, 0, episodes([400, 400]))
    warn(None, 0.99)
    assert capsys.readouterr().err == ""
