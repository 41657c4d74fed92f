"""TrainConfig(seeds=range(...)) of more seeds than len() can count (more than
sys.maxsize, 2**63 - 1 here) is the one-line error about too many seeds that 5a9020d gave
range(10**12): len() raised OverflowError, a traceback from resolve()."""

from __future__ import annotations

import sys

import pytest

from maxminq.deep.config import TrainConfig
from maxminq.errors import UsageError


@pytest.mark.parametrize("seeds", [range(10**19), range(0, sys.maxsize * 4, 2)])
def test_more_seeds_than_len_counts_are_too_many(seeds: range) -> None:
    with pytest.raises(OverflowError):  # the premise: len() cannot count them
        len(seeds)
    with pytest.raises(UsageError) as err:
        TrainConfig(env_id="CartPole-v1", seeds=seeds, buffer_size=1).resolve()
    assert str(err.value) == (
        f"--seeds: {seeds!r} is more than 1,000,000 seeds, which one run cannot hold (each "
        "seed has an environment and replay buffer of its own)"
    )
