"""The authors' MinAtar optimizer keywords ({"lr": ..., "alpha": 0.95, "centered": true,
"eps": 0.01}) copied into --optimizer-kwargs of a MinAtar run, whose optimizer is
centered_rmsprop already (second reading of cc71839): the refusal told them 'centered RMSprop
is --optimizer centered_rmsprop', the optimizer they were using."""

from __future__ import annotations

import pytest

from maxminq.deep import TrainConfig
from maxminq.errors import UsageError

MINATAR = "maxminq/MinAtar-Breakout-v0"


def _refusal(env_id: str, **given: object) -> str:
    with pytest.raises(UsageError) as err:
        TrainConfig(env_id=env_id, **given).resolve()  # type: ignore[arg-type]
    return str(err.value)


def test_centered_on_centered_rmsprop_says_it_is_centered_already() -> None:
    text = _refusal(MINATAR, optimizer_kwargs={"lr": 1e-3, "centered": True, "eps": 0.01})
    assert text == (
        "--optimizer-kwargs: centered_rmsprop takes alpha, eps, not centered, lr "
        "(centered_rmsprop is centered already; --optimizer rmsprop is not; the step size "
        "is --lr)"
    )


def test_centered_on_rmsprop_still_names_centered_rmsprop() -> None:
    text = _refusal("CartPole-v1", optimizer_kwargs={"centered": True})
    assert text.endswith("(centered RMSprop is --optimizer centered_rmsprop)")
