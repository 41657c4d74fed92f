"""The MinAtar ids of the authors' gym-games (``Asterix-MinAtar-v0``, ...,
``Space_invaders-MinAtar-v0``), as the paper's code names its games, suggest ours as their
``Catcher-PLE-v0`` does."""

from __future__ import annotations

import pytest

from maxminq.envs import make
from maxminq.errors import UsageError


@pytest.mark.parametrize(
    ("given", "suggested"),
    [
        ("Asterix-MinAtar-v0", "maxminq/MinAtar-Asterix-v0"),
        ("Breakout-MinAtar-v0", "maxminq/MinAtar-Breakout-v0"),
        ("Freeway-MinAtar-v0", "maxminq/MinAtar-Freeway-v0"),
        ("Seaquest-MinAtar-v0", "maxminq/MinAtar-Seaquest-v0"),
        ("Space_invaders-MinAtar-v0", "maxminq/MinAtar-SpaceInvaders-v0"),
    ],
)
def test_the_authors_minatar_ids_suggest_ours(given: str, suggested: str) -> None:
    with pytest.raises(UsageError) as err:
        make(given)
    assert f"did you mean {suggested}? " in str(err.value)
