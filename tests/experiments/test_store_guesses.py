"""``load_results(out, config=...)`` of a name no config registered guesses the one meant,
as ``maxminq status --config`` does: it said only 'known: toy_mdp' to ``config='toy'``."""

from __future__ import annotations

from pathlib import Path

import pytest

from maxminq.experiments.config import RunSpec
from maxminq.experiments.store import ResultsStore, StoreError, load_results


def test_a_config_name_begun_is_guessed(tmp_path: Path) -> None:
    with ResultsStore(tmp_path) as store:
        store.register(
            [RunSpec("t-1", "toy", {}, "toy_mdp"), RunSpec("m-1", "mc", {}, "mountain_car")]
        )
    with pytest.raises(StoreError) as err:
        load_results(tmp_path, config="toy")
    assert str(err.value) == (
        f"{tmp_path}: no config 'toy' here (did you mean toy_mdp?); known: mountain_car, toy_mdp"
    )
    with pytest.raises(StoreError, match=r"no config 'zzz' here; known: mountain_car, toy_mdp$"):
        load_results(tmp_path, config="zzz")
