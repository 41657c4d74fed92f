"""The note of runs an edit moves between shards names what ``maxminq reproduce --shard``
split: of 4 configs or more its combined sweep is named ``reproduce`` alone, and the note
said "config reproduce makes other runs", a config that does not exist. Runs built by hand
(4 of equal cost, then 6: each shard's runs go round in run id order)."""

from __future__ import annotations

from pathlib import Path

from maxminq.experiments.config import RunSpec
from maxminq.experiments.shard import moved_by_edit, parse_shard, record_sweep
from maxminq.experiments.store import ResultsStore


def _runs(ids: list[int]) -> list[RunSpec]:
    return [RunSpec(f"toy_mdp-00000000000{i}", "toy_mdp", {"mu": i / 10}, f"c{i % 4}") for i in ids]


def test_a_reproduce_of_many_configs_is_named_as_such(tmp_path: Path) -> None:
    shard = parse_shard("1/2")
    assert shard is not None
    first, edited = _runs([1, 3, 5, 7]), _runs([1, 2, 3, 5, 6, 7])
    with ResultsStore(tmp_path) as store:
        store.register(first)
        record_sweep(store, "reproduce", "quick", first, shard)
        store.register(edited)
        note = moved_by_edit(store, "reproduce", shard, edited)
    # shard 1 of 2 was ids 1, 5; now 1, 3, 6: 3 came from shard 2 (5 went, unfinished)
    assert note is not None
    assert note.startswith("the configs of maxminq reproduce make other runs than when"), note
    assert "(2 added, 0 no longer made)" in note
    assert "1 run(s) of shard 1/2 were other shards'" in note
    assert "config reproduce" not in note
