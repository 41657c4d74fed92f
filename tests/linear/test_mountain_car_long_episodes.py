"""Episode lengths beyond int32 (a --max-steps above 2**31 - 1 and a run that never reaches
the goal) keep their count in the command's table: the compact dtypes made every counter
int32, which wrapped such a length round to a negative number of steps."""

from __future__ import annotations

import numpy as np
import pandas as pd

from maxminq.commands.experiment import _slim


def test_a_step_count_beyond_int32_is_kept() -> None:
    long = 2**31 + 5  # one step more than int32 holds, and then some
    frame = pd.DataFrame(
        {"algorithm": "q_learning", "n": 1, "sigma2": 50.0, "step_size": 0.08, "run": [0, 1],
         "episode": [1, 1], "steps": np.array([long, 150], dtype=np.int64)}
    )  # fmt: skip
    out = _slim(frame, [])
    assert out.steps.tolist() == [long, 150]
    assert out.run.dtype == np.int32 and out.episode.dtype == np.int32  # the others still slim
    small = _slim(frame.assign(steps=[120, 150]), [])
    assert small.steps.dtype == np.int32 and small.steps.tolist() == [120, 150]
