"""``NormalizeObservation`` / ``NormalizeReward`` wrappers: ``evaluate_agent`` (``maxminq
evaluate``) names them in an ``EnvWarning``, as training does (their statistics, saved
nowhere, start afresh in its episodes: it was silent, and returned other numbers), once on
the command line, and training keeps its own words.
"""

from __future__ import annotations

import warnings

import gymnasium as gym
import pytest
from line_env import StepsEnv
from wrapped_env_runs import _model_run, _register

from maxminq.cli import main
from maxminq.deep.config import EnvWarning, TrainConfig
from maxminq.deep.policy import evaluate_agent, load_agent
from maxminq.deep.train import Trainer


def _obs_normalized(**kwargs):
    return gym.wrappers.NormalizeObservation(StepsEnv(**kwargs))


def _reward_normalized(**kwargs):
    return gym.wrappers.NormalizeReward(StepsEnv(**kwargs))


def _both_normalized(**kwargs):
    return gym.wrappers.NormalizeReward(gym.wrappers.NormalizeObservation(StepsEnv(**kwargs)))


@pytest.mark.parametrize(
    "entry,names,effects",
    [
        (_obs_normalized, "NormalizeObservation", ["observations on other scales"]),
        (_reward_normalized, "NormalizeReward", ["rewards scaled by these episodes"]),
        (
            _both_normalized,
            "NormalizeObservation and NormalizeReward",
            ["observations on other scales", "rewards scaled by these episodes"],
        ),
    ],
)
def test_evaluate_warns_about_a_normalize_wrapper_as_training_does(
    entry, names, effects, tmp_path
) -> None:
    """Training warns (and --resume refuses); evaluate_agent played on with statistics that
    start afresh, silently: the agent saw other scales, the returns were rescaled rewards."""
    agent = load_agent(_model_run(tmp_path / "run", _register(entry)))
    with pytest.warns(EnvWarning) as caught:
        evaluate_agent(agent, [0, 1], episodes=2)
    texts = [str(w.message) for w in caught if issubclass(w.category, EnvWarning)]
    assert len(texts) == 1, texts
    text = texts[0]
    assert f"is wrapped in {names}, whose running statistics were not saved" in text, text
    assert "one seed's to the next seed's" in text  # one environment plays every seed
    for effect in effects:
        assert effect in text, text
    assert text.endswith("(TransformObservation, TransformReward) and train again"), text


def test_evaluate_without_a_normalize_wrapper_does_not_warn(tmp_path) -> None:
    agent = load_agent(_model_run(tmp_path / "run", _register(StepsEnv)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = evaluate_agent(agent, [0, 1], episodes=2)
    assert table["length"].tolist() == [6] * 4


def test_the_command_names_the_wrapper_once_and_plays(tmp_path, capsys) -> None:
    run = _model_run(tmp_path / "run", _register(_obs_normalized))
    assert main(["evaluate", str(run), "--episodes", "2", "--no-progress"]) == 0
    captured = capsys.readouterr()
    lines = [ln for ln in captured.err.splitlines() if "NormalizeObservation" in ln]
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("maxminq evaluate: warning: mmq-leftovers18-deep/"), lines[0]
    assert "seed 0: return" in captured.out and "seed 1: return" in captured.out


def test_training_still_warns_in_its_own_words() -> None:
    """The training warning (now from the same function) keeps its text: --resume and the
    test episodes are what it concerns."""
    cfg = TrainConfig(
        env_id=_register(_reward_normalized), agent="dqn", steps=20, seeds=[0]
    ).resolve()
    with pytest.warns(EnvWarning, match="NormalizeReward, whose running statistics") as caught:
        Trainer(cfg).close()
    text = next(str(w.message) for w in caught if "NormalizeReward" in str(w.message))
    assert "are not in checkpoints (--resume refuses the run)" in text
    assert "start afresh in every new environment (the test episodes, maxminq evaluate)" in text
