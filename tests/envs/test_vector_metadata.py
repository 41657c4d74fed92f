"""The native Catcher/Pixelcopter vector envs declare what a ``SyncVectorEnv`` of the same
games declares (Gymnasium's vector wrappers read it: ``HumanRendering`` refuses an env
without ``render_fps``): render modes, autoreset mode and ``render_fps`` 30, PLE's fps."""

from __future__ import annotations

import gymnasium as gym
import pytest

from maxminq.envs import make, make_vector


@pytest.mark.parametrize("env_id", ["maxminq/Catcher-v0", "maxminq/Pixelcopter-v0"])
def test_native_vector_metadata_is_a_sync_vector_envs(env_id: str) -> None:
    native = make_vector(env_id, seeds=[0, 1])
    sync = gym.vector.SyncVectorEnv(
        [lambda: make(env_id)] * 2, autoreset_mode=gym.vector.AutoresetMode.SAME_STEP
    )
    assert native.metadata == sync.metadata
    assert native.metadata["render_fps"] == 30
