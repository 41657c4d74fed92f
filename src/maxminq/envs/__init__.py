"""The paper's benchmark environments behind one Gymnasium interface.

Importing this package registers (idempotently) ``maxminq/Catcher-v0`` (cap 2,000),
``maxminq/Pixelcopter-v0`` (cap 500) and ``maxminq/MinAtar-{Asterix,Breakout,Freeway,
Seaquest,SpaceInvaders}-v0`` (Seaquest capped at 10,000 steps). ``LunarLander-v3`` comes from
``gymnasium[box2d]``. :mod:`maxminq.envs.registry` holds the paper's training defaults.
"""

from __future__ import annotations

from maxminq.envs import registry
from maxminq.envs.api import (
    CATCHER_ID,
    MINATAR_IDS,
    PIXELCOPTER_ID,
    known_ids,
    make,
    make_vector,
    register_envs,
)
from maxminq.envs.registry import PAPER_ENVS, EnvDefaults, get_env_defaults

register_envs()

__all__ = [
    "CATCHER_ID",
    "MINATAR_IDS",
    "PAPER_ENVS",
    "PIXELCOPTER_ID",
    "EnvDefaults",
    "get_env_defaults",
    "known_ids",
    "make",
    "make_vector",
    "register_envs",
    "registry",
]
