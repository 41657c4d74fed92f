"""A word that begins exactly one candidate is taken as meaning it ("did you mean"), before
difflib's closest spelling: ``maxminq reproduce --only toy`` said 'did you mean theory?'
(difflib's ratio: 'toy'/'theory' 0.67 > 'toy'/'toy_mdp' 0.60) beside the config toy_mdp."""

from __future__ import annotations

from maxminq.errors import closest


def test_the_one_candidate_a_word_begins_is_meant() -> None:
    names = ["theory", "toy_mdp", "mountain_car", "catcher"]  # some of reproduce --only's
    assert closest("toy", names) == "toy_mdp"
    assert closest("Mountain", names) == "mountain_car"  # case aside, as a case slip is


def test_several_or_short_beginnings_fall_back_to_the_closest_spelling() -> None:
    # two candidates begin with 'pixel': difflib decides, as before
    assert closest("pixel", ["pixelcopter", "pixelcopter_varying_n", "toy_mdp"]) == "pixelcopter"
    # two letters are no word to go by: 'to' begins toy_mdp, but no spelling is close
    assert closest("to", ["theory", "toy_mdp", "catcher"]) is None
