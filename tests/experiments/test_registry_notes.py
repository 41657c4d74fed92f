"""A classic run's registry note is read back by the reader beside its writer
(``experiments.registry.nonfinite_count``), as the report's Mountain Car notes read it."""

import numpy as np

from maxminq.experiments.registry import mountain_car_note, nonfinite_count


def test_the_count_of_a_mountain_car_note_is_read_back() -> None:
    weights = np.zeros((1_200, 3, 8))
    weights[[4, 17, 900], 1, 2] = [np.nan, np.inf, -np.inf]  # 3 of 1,200 runs gone
    settings = {"algorithm": "q_learning", "n": 1, "sigma2": 50, "step_size": 0.08}
    note = mountain_car_note(weights, {**settings, "episodes": 300})
    assert nonfinite_count(note) == ("3", "1200")
    one = mountain_car_note(np.full((1, 2), np.nan), settings)
    assert nonfinite_count(one) == ("1", "1")  # "1 of 1 run"


def test_other_notes_have_no_count() -> None:
    assert mountain_car_note(np.zeros((4, 2)), {}) is None
    for note in (None, "", "diverged seeds: [1]", "failed: worker process died", 3):
        assert nonfinite_count(note) is None
