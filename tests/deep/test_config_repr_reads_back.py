"""``repr(TrainConfig(...))`` reads back as the same config (its docstring's promise, what
a notebook user copies into the next cell) also when NumPy values or non-finite floats
were given: ``np.arange(3)`` was shown as ``array([0, 1, 2])``, ``np.float32(0.95)`` as
``np.float32(0.95)`` and ``inf`` / ``nan`` as bare names, NameErrors when read back."""

from __future__ import annotations

import math

import numpy as np

from maxminq.deep import TrainConfig


def _back(text: str) -> TrainConfig:
    return eval(text, {"TrainConfig": TrainConfig})  # noqa: S307 - the repr's own promise


def test_numpy_values_are_shown_as_the_python_values_resolve_makes_of_them() -> None:
    config = TrainConfig(
        env_id="CartPole-v1",
        agent="ensemble-dqn",
        n=np.int64(2),
        lr=np.float32(0.5),  # exact in float32: 0.5 either way
        seeds=np.arange(3),
        hidden=(np.int64(16),),
        optimizer_kwargs={"alpha": np.float64(0.25)},
        steps=300,
    )
    text = repr(config)
    assert text == (
        "TrainConfig(env_id='CartPole-v1', agent='ensemble-dqn', n=2, lr=0.5, steps=300, "
        "seeds=[0, 1, 2], optimizer_kwargs={'alpha': 0.25}, hidden=(16,))"
    )
    assert _back(text).resolve() == config.resolve()


def test_a_float32_number_is_shown_as_the_float_it_is() -> None:
    # 0.001 is no float32: np.float32(0.001) holds 0.0010000000474974513, what resolve() keeps.
    config = TrainConfig(env_id="CartPole-v1", lr=np.float32(0.001))
    assert repr(config) == "TrainConfig(env_id='CartPole-v1', lr=0.0010000000474974513)"
    assert _back(repr(config)).resolve().lr == config.resolve().lr == float(np.float32(0.001))


def test_non_finite_floats_read_back() -> None:
    config = TrainConfig(env_id="CartPole-v1", grad_clip=math.inf)  # a bound that never clips
    assert repr(config) == "TrainConfig(env_id='CartPole-v1', grad_clip=float('inf'))"
    assert _back(repr(config)) == config
    # resolve() refuses these, but the repr of what was given still reads back, to fix it
    bad = TrainConfig(env_id="X", grad_clip=np.float64("nan"), env_kwargs={"g": [-math.inf]})
    text = repr(bad)
    assert text == (
        "TrainConfig(env_id='X', grad_clip=float('nan'), env_kwargs={'g': [-float('inf')]})"
    )
    back = _back(text)
    assert math.isnan(back.grad_clip) and back.env_kwargs == {"g": [-math.inf]}
