"""Second reading of session 20's own-environment work: the repeatability check played
before training (``warn_if_not_repeatable``) puts back the global generators also where
the environment's constructor draws from them, and cannot stop a run whose environment
fails to be made a second time; the self-cut ``CutEpisodesWarning``'s words,
composed (not patched), checked word for word."""

from __future__ import annotations

import itertools
import random
import warnings

import gymnasium as gym
import numpy as np
import pytest

from maxminq.deep.bias_probes import CutTally, cut_episodes_message
from maxminq.deep.config import TrainConfig
from maxminq.deep.env_checks import warn_if_not_repeatable
from maxminq.errors import UsageError


class _Line(gym.Env):
    """Two cells; action 1 ends the episode. Deterministic from its reset seed."""

    observation_space = gym.spaces.Box(0.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.array([1.0, 0.0], np.float32), {}

    def step(self, action):
        done = action == 1
        return np.array([0.0, 1.0], np.float32), float(done), bool(done), False, {}


class _DrawsWhenMade(_Line):
    """Draws from np.random and random when made (a map, say), never while it plays."""

    def __init__(self):
        self.layout = (np.random.rand(), random.random())  # noqa: NPY002, S311


_made = {"count": 0}


class _OnceOnly(_Line):
    """Can be made once only (a port, a licence, a window); the second fails."""

    def __init__(self):
        _made["count"] += 1
        if _made["count"] > 1:
            raise RuntimeError("already made")


gym.register("R20DrawsWhenMade-v0", entry_point=_DrawsWhenMade, max_episode_steps=20)
gym.register("R20OnceOnly-v0", entry_point=_OnceOnly, max_episode_steps=20)


def _cfg(env_id: str):
    return TrainConfig(env_id=env_id, seeds=[0], steps=100).resolve()


def test_draws_of_the_constructor_are_put_back_so_a_seeded_run_is_unchanged():
    """A user who seeds np.random and random and whose environment draws from them when
    made got the same environments from run_training before the check: the check's own
    environment drew first, so the run's got other numbers (and no warning said why)."""
    cfg = _cfg("R20DrawsWhenMade-v0")
    np.random.seed(123)  # noqa: NPY002
    random.seed(123)
    expected = (np.random.rand(), random.random())  # noqa: NPY002, S311
    np.random.seed(123)  # noqa: NPY002
    random.seed(123)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning either: its plays draw nothing
        warn_if_not_repeatable(cfg)
    assert (np.random.rand(), random.random()) == expected  # noqa: NPY002, S311


def test_an_environment_that_fails_to_be_made_again_is_left_to_the_run():
    """An environment whose make fails when the check makes one more (one that can be made
    only so many times: a licence, a port): the check's make was outside its guard and
    its error stopped the run before training; now the check gives up in silence."""
    _made["count"] = 0
    cfg = _cfg("R20OnceOnly-v0")  # resolve() made the first
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_if_not_repeatable(cfg)
    assert _made["count"] == 2  # the check did try to make one


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


def test_exploration_fraction_is_told_how_to_become_a_step_count():
    """SB3's and CleanRL's exploration_fraction (0.1: eps reaches its end at a tenth of
    total_timesteps, counted from step 0) was told eps_decay_steps is 'in steps after
    learning_starts, not a fraction of the run' but not how to get the step count; here the
    decay starts at learning_starts, so the same end is f * T - learning_starts."""
    with pytest.raises(TypeError) as err:
        TrainConfig(exploration_fraction=0.1)
    assert str(err.value) == (
        "TrainConfig.__init__() got an unexpected keyword argument 'exploration_fraction'; "
        "did you mean eps_decay_steps, in steps after learning_starts, not a fraction of the "
        "run: exploration_fraction * total_timesteps - learning_starts ends the decay at the "
        "same step? (exploration_fraction is Stable-Baselines3's or CleanRL's)"
    )


def test_update_members_below_1_is_told_so_not_what_gives_more():
    """update_members=0 (Python or a sweep config) for an agent with one online net was told
    it 'has one online net to update (--n 2 or more gives it more), so it must be 1': the
    remedy for too many, to one who gave too few."""
    with pytest.raises(UsageError) as err:
        TrainConfig(env_id="CartPole-v1", agent="maxmin-dqn", n=1, update_members=0).resolve()
    assert str(err.value) == "--update-members: must be >= 1, got 0"


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


gym.register("R20Line-v0", entry_point=_Line, max_episode_steps=20)


def test_an_instance_of_a_registered_class_made_directly_is_told_its_id():
    """env_id=Line() (as Stable-Baselines3's DQN('MlpPolicy', Line()) takes it), its class
    registered as R20Line-v0: the class itself was told its id, the instance (no spec, as
    made without gym.make) only to 'register it with gymnasium.register'."""
    with pytest.raises(UsageError) as err:
        TrainConfig(env_id=_Line()).resolve()
    assert str(err.value).endswith(
        "give its id with the module that registers it (module:EnvId), e.g. "
        f"'{_Line.__module__}:R20Line-v0'"
    ), str(err.value)


def test_optimizer_class_is_told_optimizer_not_optimizer_kwargs():
    """Stable-Baselines3's optimizer_class=th.optim.Adam was told 'did you mean
    optimizer_kwargs?' (a close spelling), where the optimizer is chosen by name."""
    with pytest.raises(TypeError) as err:
        TrainConfig(optimizer_class=object)
    assert str(err.value).endswith(
        "; did you mean optimizer, a name: 'adam', 'rmsprop' or 'centered_rmsprop' (its "
        "settings: optimizer_kwargs)? (optimizer_class is Stable-Baselines3's or CleanRL's)"
    ), str(err.value)
