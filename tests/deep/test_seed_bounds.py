"""A seed of 2**63 or more is refused before the run starts: such a run trained, but the
seed column of its tables no longer fitted int64, so pandas read it as text and ``maxminq
plot`` / ``compare`` refused the finished run ("column 'seed' holds text")."""

from __future__ import annotations

import pandas as pd
import pytest
from deep_runs import TINY

from maxminq.cli import main
from maxminq.deep import TrainConfig, run_training
from maxminq.errors import UsageError


def test_a_seed_beyond_int64_is_refused_before_the_folder_is_touched(tmp_path, capsys) -> None:
    out = tmp_path / "run"
    with pytest.raises(UsageError) as info:
        run_training(TrainConfig(**{**TINY, "seeds": [0, 2**63]}), out, progress=False)
    assert str(info.value) == (
        "--seeds: a seed must be below 2**63 (the tables hold seeds as int64), got "
        "9223372036854775808"
    )
    argv = ["train", "--env", "CartPole-v1", "--steps", "200", "--seeds", str(2**70)]
    assert main([*argv, "--out", str(out), "--no-progress"]) == 2
    assert capsys.readouterr().err == (
        "maxminq train: error: --seeds: a seed must be below 2**63 (the tables hold seeds as "
        "int64), got 1180591620717411303424\n"
    )
    assert not out.exists()


def test_the_largest_int64_seed_trains_and_its_tables_read_as_numbers(tmp_path) -> None:
    seed = 2**63 - 1
    run_training(TrainConfig(**{**TINY, "seeds": [seed]}), tmp_path / "run", progress=False)
    episodes = pd.read_csv(tmp_path / "run" / "episodes.csv")
    assert episodes.seed.dtype == "int64" and (episodes.seed == seed).all()
