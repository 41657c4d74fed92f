"""Non-finite and out-of-float32 values an environment gives: named with the row and value
in the replay and in episodes, in one line, without NumPy's overflow warning."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from line_env import StepsEnv
from wrapped_env_runs import _model_run, _register

from maxminq.cli import main
from maxminq.deep.env_checks import episode_observation
from maxminq.deep.replay import ReplayBuffers, check_finite
from maxminq.errors import UsageError


def _rows(s: int = 3, bad_row: int | None = None, value: float = np.nan) -> np.ndarray:
    obs = np.ones((s, 4), np.float32)
    if bad_row is not None:
        obs[bad_row, 2] = value
    return obs


class _HugeReward(StepsEnv):
    """StepsEnv whose reward at step 3 of an episode is 1e39 (finite, beyond float32)."""

    def step(self, action):
        obs, reward, *rest = super().step(action)
        return obs, (1e39 if self.t == 3 else reward), *rest


@pytest.mark.usefixtures("torch_one_thread")
def test_the_replay_and_an_episode_say_it_in_the_same_words() -> None:
    """'an observation (seed position 1 in --seeds) holds nan' in training, 'an observation
    of a test or evaluation episode (...) is nan as float32' in an episode: one wording now,
    each naming where the value came from."""
    buffers = ReplayBuffers(3, 10, (4,), np.dtype(np.float32))
    ok = np.zeros(3)
    with pytest.raises(UsageError) as err:
        buffers.add(_rows(), ok, ok, _rows(bad_row=1), ok)
    assert str(err.value) == (
        "--env: an observation (seed position 1 in --seeds) is nan as float32; observations "
        "must be finite numbers"
    )
    with pytest.raises(UsageError) as err:
        episode_observation(_rows(1, 0)[0], (4,), "X-v0", "seed 5's episode 2, step()")
    assert str(err.value) == (
        "--env: an observation of a test or evaluation episode (seed 5's episode 2, step()) is "
        "nan as float32; observations must be finite numbers"
    )


@pytest.mark.usefixtures("torch_one_thread")
def test_an_inf_names_float32s_range_in_an_episode_too() -> None:
    """1e39 from a float64 environment is inf as float32: training said so (the range), a
    test or evaluation episode only 'is inf', a value the environment never returned."""
    with pytest.raises(UsageError, match=r"float32 holds \+-3\.4e\+38 at most: beyond, inf\)$"):
        episode_observation(np.full(4, 1e39), (4,), "X-v0", "seed 0's episode 1, step()")
    with pytest.raises(UsageError, match=r"^--env: a reward of .* is inf as float32; .*3\.4e\+38"):
        episode_observation(np.ones(4), (4,), "X-v0", "seed 0's episode 1, step()", 1e39)
    buffers = ReplayBuffers(2, 10, (4,), np.dtype(np.float32))
    ok = np.zeros(2)
    with pytest.raises(
        UsageError, match=r"^--env: a reward \(seed position 1 in --seeds\) is -inf.*3\.4e\+38"
    ):
        buffers.add(_rows(2), ok, np.array([0.0, -1e39]), _rows(2), ok)


@pytest.mark.usefixtures("torch_one_thread")
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_the_first_bad_row_and_value_are_named(value) -> None:
    obs = _rows(4, 2, value)
    obs[3, 0] = np.nan  # a later row: not the one named
    with pytest.raises(UsageError, match=rf"\(seed position 2 in --seeds\) is {value} as float32"):
        check_finite(lambda s: f"(seed position {s} in --seeds)", np.zeros(4, np.float32), obs)
    # In a uint8 replay buffer (MinAtar's), a NaN is named as such, not as a uint8 value.
    buffers = ReplayBuffers(4, 10, (4,), np.dtype(np.uint8))
    ok = np.zeros(4)
    with pytest.raises(UsageError, match=rf"seed position 2 in --seeds\) is {value} as float32"):
        buffers.add(np.ones((4, 4)), ok, ok, obs, ok)


@pytest.mark.usefixtures("torch_one_thread")
def test_large_finite_values_pass_both_ways() -> None:
    """The quick test sums squares: 1e20 squared is beyond float32 though 1e20 is finite
    there; the exact test decides, and lets it (and a reward at float32's maximum) through."""
    big = np.full((2, 4), 1e20, np.float32)
    top = float(np.finfo(np.float32).max)
    buffers = ReplayBuffers(2, 10, (4,), np.dtype(np.float32))
    buffers.add(big, np.zeros(2), np.array([top, -top]), big, np.zeros(2))
    assert buffers.size == 1 and (buffers.next_obs[:, 0] == 1e20).all()
    arr = episode_observation(big[0], (4,), "X-v0", "seed 0's episode 1, step()", top)
    assert arr.dtype == np.float32 and (arr == np.float32(1e20)).all()
    check_finite("here", 0.0, big[0])  # nothing raised
    with pytest.raises(UsageError, match=r"a reward here is nan as float32"):
        check_finite("here", None, big[0])  # None reads as NaN, as before


@pytest.mark.usefixtures("torch_one_thread")
def test_the_commands_show_the_float32_error_without_numpys_overflow_warning(tmp_path, capsys):
    """NumPy's 'RuntimeWarning: overflow encountered in cast' (two lines of file and source)
    came before the one-line --env error, which already names float32's range."""
    env_id = _register(_HugeReward)
    argv = ["train", "--env", env_id, "--agent", "dqn", "--steps", "20", "--no-plot"]
    argv += ["--learning-starts", "10", "--no-progress", "--out", str(tmp_path / "run")]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert main(argv) == 2
    assert not [w for w in seen if w.category is RuntimeWarning], [str(w.message) for w in seen]
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("maxminq train: error: --env: a reward (seed position 0"), err
    # evaluate: the test-episode step's reward
    run = _model_run(tmp_path / "model", env_id)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert main(["evaluate", str(run), "--episodes", "1", "--no-progress"]) == 2
    assert not [w for w in seen if w.category is RuntimeWarning], [str(w.message) for w in seen]
    err = capsys.readouterr().err
    assert err.startswith("maxminq evaluate: error: --env: a reward of a test or eval"), err
    assert err.count("\n") == 1, err


@pytest.mark.parametrize("value,shown", [(255.0000001, "255.0000001"), (3.5, "3.5")])
def test_a_uint8_buffer_names_a_value_that_rounds_to_a_whole_number_as_float32(
    value, shown
) -> None:
    """ReplayBuffers.add with float64 observations (its API takes any array): 255.0000001
    is stored as 255 and differs from it, but fbdf6b9 looked for the difference after a
    float32 cast (255.0 there) and found none: an IndexError instead of the UsageError."""
    from maxminq.deep.replay import ReplayBuffers
    from maxminq.errors import UsageError

    rb = ReplayBuffers(2, 4, (3,), np.dtype(np.uint8))
    obs = np.array([[0.0, 1.0, 2.0], [4.0, value, 6.0]])
    step = (np.array([0, 1]), np.ones(2, np.float32), np.zeros((2, 3)), np.zeros(2, np.float32))
    with pytest.raises(UsageError, match=rf"seed position 1 in --seeds\) holds {shown}, .*uint8"):
        rb.add(obs, step[0], step[1], step[2], step[3])
