"""Seeds of ``make_vector``'s native Catcher / Pixelcopter vector envs at the first reset: a
``reset(seed=[s, None, ...])`` leaves the None slots their construction seeds, as the
``SyncVectorEnv`` that ``make_vector`` builds for every other id does; ``np_random_seed``
names each slot's seed, as that ``SyncVectorEnv``'s does."""

from __future__ import annotations

from functools import partial

import gymnasium as gym
import numpy as np
import pytest

from maxminq.envs import make, make_vector

IDS = ["maxminq/Catcher-v0", "maxminq/Pixelcopter-v0", "maxminq/MinAtar-Breakout-v0"]


@pytest.mark.parametrize("env_id", IDS)
def test_a_none_seed_at_the_first_reset_keeps_the_construction_seed(env_id: str) -> None:
    venv = make_vector(env_id, seeds=[1, 2, 3])
    obs, _ = venv.reset(seed=[5, None, 7])
    n = int(venv.single_action_space.n)
    singles = [make(env_id, seed=5), make(env_id, seed=2), make(env_id, seed=7)]
    expected = [env.reset()[0] for env in singles]
    np.testing.assert_array_equal(obs, np.stack(expected))
    for t in range(40):  # and the slot keeps playing the single game of that seed
        actions = np.full(3, t % n)
        obs, *_ = venv.step(actions)
        for i, env in enumerate(singles):
            o, _, term, trunc, _ = env.step(t % n)
            if term or trunc:
                o, _ = env.reset()
            np.testing.assert_array_equal(obs[i], o)


@pytest.mark.parametrize("env_id", ["maxminq/Catcher-v0", "maxminq/Pixelcopter-v0"])
def test_np_random_seed_names_each_slots_seed_as_sync_vector_env_does(env_id: str) -> None:
    """It was VectorEnv's own lazily drawn random seed, whatever reset was given."""
    venv = make_vector(env_id, seeds=[3, 4])
    sync = gym.vector.SyncVectorEnv([partial(make, env_id, seed=s) for s in (3, 4)])
    mask = {"reset_mask": np.array([False, True])}
    for kwargs in ({}, {"seed": 5}, {"seed": [None, 9]}, {"seed": 1, "options": mask}):
        venv.reset(**kwargs)
        sync.reset(**kwargs)
        assert venv.np_random_seed == sync.np_random_seed
    assert venv.np_random_seed == (5, 2)  # by hand: 5 then 9 in slot 1, then 1 + 1 there


@pytest.mark.parametrize("env_id", ["maxminq/Catcher-v0", "maxminq/MinAtar-Breakout-v0"])
def test_numpy_seeds_reset_every_vector_env_as_python_ints_do(env_id: str) -> None:
    """make_vector's SyncVectorEnv (every id but Catcher and Pixelcopter) failed on
    reset(seed=np.int64(3)) ("object of type 'numpy.int64' has no len()") and on NumPy
    seed lists; the native vector envs refused an array of seeds."""
    for numpy_seed, plain in (
        (np.int64(3), 3),
        (np.arange(3, 5), [3, 4]),
        ([np.int64(3), None], [3, None]),
    ):
        a = make_vector(env_id, seeds=[0, 1])
        b = make_vector(env_id, seeds=[0, 1])
        np.testing.assert_array_equal(a.reset(seed=numpy_seed)[0], b.reset(seed=plain)[0])
        assert a.np_random_seed == b.np_random_seed
    with pytest.raises(ValueError, match=r"seed\[0\] must be a non-negative integer, got 1.5"):
        make_vector(env_id, seeds=[0, 1]).reset(seed=[1.5, 2])


@pytest.mark.parametrize("env_id", ["maxminq/Catcher-v0", "maxminq/Pixelcopter-v0"])
def test_the_seeds_seed_the_action_spaces_as_a_sync_vector_env_of_make_does(env_id: str) -> None:
    """The native vector env's action spaces drew from OS entropy: a random policy from
    venv.action_space.sample() changed from run to run, unlike make_vector's SyncVectorEnv
    of every other id (its sub-env 0's action space is seeded by make(seed=seeds[0]))."""
    venv = make_vector(env_id, seeds=[5, 6, 7])
    sync = gym.vector.SyncVectorEnv([partial(make, env_id, seed=s) for s in (5, 6, 7)])
    got = [venv.action_space.sample() for _ in range(20)]
    expected = [sync.action_space.sample() for _ in range(20)]
    np.testing.assert_array_equal(got, expected)
    singles = [venv.single_action_space.sample() for _ in range(20)]
    assert singles == [sync.single_action_space.sample() for _ in range(20)]


def test_the_vector_env_class_takes_numpy_seeds() -> None:
    """CatcherVectorEnv(seeds=np.array([...])) (the class, without make_vector's seed check)
    failed once its seeds seeded the action spaces: Gymnasium takes Python ints only."""
    from maxminq.envs.catcher import CatcherVectorEnv

    venv = CatcherVectorEnv(seeds=np.array([1, 2]))
    np.testing.assert_array_equal(
        venv.reset()[0], make_vector("maxminq/Catcher-v0", [1, 2]).reset()[0]
    )
    assert venv.np_random_seed == (1, 2)
    sync = gym.vector.SyncVectorEnv([partial(make, "maxminq/Catcher-v0", seed=s) for s in (1, 2)])
    np.testing.assert_array_equal(venv.action_space.sample(), sync.action_space.sample())
    with pytest.raises(ValueError, match=r"seeds\[1\] must be a non-negative integer, got -2"):
        CatcherVectorEnv(seeds=[1, -2])
