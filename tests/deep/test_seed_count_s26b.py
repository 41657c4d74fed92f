"""More than 1,000,000 seeds is refused from Python too (session 26, fact-check of
docs/deep-agents.md: 'a run ... that lists more than 1,000,000 seeds ... is refused before
--out is touched'). Only the command's --seeds parser counted them: TrainConfig(seeds=range(
1_000_001), buffer_size=1).resolve() was accepted (a sweep's settings too), run_training then
built a million environments, and seeds=range(10**12) built a list of 10**12 ints inside
resolve(). The memory check caught such a run only when its buffers were large."""

from __future__ import annotations

import pytest

from maxminq.deep import TrainConfig, run_training
from maxminq.errors import UsageError

TOO_MANY = r"^--seeds: 1,000,001 seeds is more than 1,000,000 seeds"


@pytest.mark.parametrize("seeds", [range(1_000_001), list(range(1_000_001))])
def test_more_than_a_million_seeds_are_refused_whatever_the_buffers(seeds) -> None:
    with pytest.raises(UsageError, match=TOO_MANY):
        TrainConfig(env_id="CartPole-v1", seeds=seeds, buffer_size=1, steps=10).resolve()


def test_a_huge_range_is_refused_before_its_list_is_built() -> None:
    with pytest.raises(UsageError, match=r"^--seeds: 1,000,000,000,000 seeds is more than"):
        TrainConfig(env_id="CartPole-v1", seeds=range(10**12)).resolve()


def test_run_training_refuses_them_before_the_folder_is_touched(tmp_path) -> None:
    out = tmp_path / "run"
    config = TrainConfig(env_id="CartPole-v1", seeds=range(1_000_001), buffer_size=1)
    with pytest.raises(UsageError, match=TOO_MANY):
        run_training(config, out, progress=False)
    assert not out.exists()


def test_a_million_seeds_are_still_taken() -> None:
    cfg = TrainConfig(env_id="CartPole-v1", seeds=range(1_000_000), buffer_size=1).resolve()
    assert len(cfg.seeds) == 1_000_000 and cfg.seeds[-1] == 999_999


def test_the_command_says_the_same() -> None:
    from maxminq.commands.train import parse_seeds

    with pytest.raises(UsageError, match=r"^--seeds: 0-1000000 is more than 1,000,000 seeds"):
        parse_seeds("0-1000000")
    assert parse_seeds("0-2,9") == [0, 1, 2, 9]


@pytest.mark.parametrize(
    ("seeds", "kind"),
    [(iter([0, 1]), "list_iterator"), ((s for s in (0, 1)), "generator"), (map(int, "01"), "map")],
)
def test_seeds_that_can_be_read_once_only_are_named_so(seeds, kind: str) -> None:
    """A generator of seeds was read up by the first check, and the run was refused as
    having none: '--seeds: give at least one seed, e.g. 0-4', for seeds (0, 1)."""
    with pytest.raises(UsageError) as err:
        TrainConfig(env_id="CartPole-v1", seeds=seeds).resolve()
    assert str(err.value) == (
        f"--seeds: expected a list, range or array of whole numbers, got a {kind}, which can "
        "be read once only: seeds=list(...)"
    )
