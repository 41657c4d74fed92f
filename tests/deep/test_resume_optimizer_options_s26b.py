"""--resume compares the optimizer's options as the optimizer takes them (session 26, second
reading of cb95062). Since --optimizer-kwargs is merged over the registry's options, a MinAtar
run given '{"alpha": 0.9}' before that change saved {"alpha": 0.9} (torch's eps 1e-8), and the
same options now resolve to {"alpha": 0.9, "eps": 0.01}: the refusal said 'use its options',
and neither those nor the options spelled out in full ({"alpha": 0.9, "eps": 1e-8}, the very
optimizer it trained with) were accepted, so such a run could never be continued."""

from __future__ import annotations

import inspect
import json

import pandas as pd
import pytest
import torch
from deep_runs import TINY

from maxminq.deep import TrainConfig, run_training
from maxminq.deep.run_folder import check_resumable
from maxminq.errors import UsageError

MINATAR = "maxminq/MinAtar-Breakout-v0"


def test_torch_rmsprop_defaults_are_the_ones_assumed_here() -> None:
    """The values the tests below write by hand are torch's own defaults."""
    params = inspect.signature(torch.optim.RMSprop).parameters
    assert params["alpha"].default == 0.99 and params["eps"].default == 1e-8


def test_an_old_minatar_checkpoint_is_continued_with_its_options_in_full() -> None:
    now = TrainConfig(env_id=MINATAR, optimizer_kwargs={"alpha": 0.9}).resolve()
    saved = json.loads(now.result_key())
    saved["optimizer_kwargs"] = {"alpha": 0.9}  # as resolved and saved before cb95062
    with pytest.raises(UsageError) as err:
        check_resumable(saved, now, 0)
    # The run's options as one can give them back (torch's eps), beside today's.
    assert '--optimizer-kwargs {"alpha": 0.9, "eps": 1e-08} (now {"alpha": 0.9, "eps": 0.01})' in (
        str(err.value)
    )
    full = TrainConfig(env_id=MINATAR, optimizer_kwargs={"alpha": 0.9, "eps": 1e-8}).resolve()
    check_resumable(saved, full, 0)  # the same optimizer: accepted
    other = TrainConfig(env_id=MINATAR, optimizer_kwargs={"alpha": 0.9, "eps": 1e-6}).resolve()
    with pytest.raises(UsageError, match="other options"):  # another optimizer: refused
        check_resumable(saved, other, 0)


def test_a_run_resumes_under_its_optimizer_options_spelled_out(tmp_path) -> None:
    """CartPole's RMSprop trained with no options (torch's alpha 0.99, eps 1e-8) and
    continued with those two given: the same optimizer, so the finished run is read back and
    extending it gives the tables of a run trained to the end at once."""
    base = {**TINY, "seeds": [0], "checkpoint_every": 100}
    spelled = {"alpha": 0.99, "eps": 1e-8}
    out = tmp_path / "run"
    first = run_training(TrainConfig(**base, optimizer_kwargs={}), out, progress=False)
    again = run_training(
        TrainConfig(**base, optimizer_kwargs=spelled), out, resume=True, progress=False
    )
    pd.testing.assert_frame_equal(first["episodes"], again["episodes"])
    longer = {**base, "steps": 300}
    resumed = run_training(
        TrainConfig(**longer, optimizer_kwargs=spelled), out, resume=True, progress=False
    )
    whole = run_training(TrainConfig(**longer), tmp_path / "whole", progress=False)
    for name in ("episodes", "tests"):
        pd.testing.assert_frame_equal(resumed[name], whole[name])
