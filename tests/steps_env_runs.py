"""StepsEnv ids and model-only run folders shared by the load_agent / evaluate tests."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import torch

from maxminq.deep.config import TrainConfig
from maxminq.deep.nets import build_net
from maxminq.deep.policy import MODEL_FILE, save_model


def _register(entry, cap: int | None = 50, name: str | None = None) -> str:
    name = name or getattr(entry, "__name__", "env").strip("_")
    env_id = f"mmq-leftovers17b/{name}-{cap}-v0"
    if env_id not in gym.registry:
        gym.register(env_id, entry_point=entry, max_episode_steps=cap)
    return env_id


def _model_run(folder: Path, env_id: str) -> Path:
    """A run folder with only a model.pt: a DQN's untrained networks (seed 0) for the
    three features of StepsEnv, written without training (what load_agent reads)."""
    cfg = TrainConfig(env_id=env_id, agent="dqn", n=1, steps=100, seeds=[0]).resolve()
    net = build_net("mlp", 1, (3,), 2)
    net.init_members([torch.Generator().manual_seed(0)], 1)
    folder.mkdir()
    save_model(folder / MODEL_FILE, cfg, net, (3,), ["done"])
    return folder
