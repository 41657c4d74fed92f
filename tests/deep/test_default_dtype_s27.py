"""Training and trained agents do not depend on torch's default dtype (session 27): a
notebook or script that had called ``torch.set_default_dtype(torch.float64)`` (common in
research code) made ``run_training`` and ``evaluate_agent`` fail with torch's "Input dtypes
must be the same, got: input double, batch1: float" from inside the batched products, as
the networks were allocated and initialised in the default dtype while observations are
float32. The networks are float32 whatever the default, so the run is the one a float32
default gives, bit for bit, and the caller's default is left as it was."""

from __future__ import annotations

import warnings

import torch
from deep_runs import _deterministic, _small

from maxminq.deep import evaluate_agent, load_agent, run_training


def test_a_float64_default_dtype_trains_and_plays_the_float32_run(tmp_path) -> None:
    cfg = _small(steps=200, learning_starts=50, eval_episodes=1, save_probes=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the short run's own warnings
        expected = _deterministic(run_training(cfg, tmp_path / "f32", progress=False))
        played = evaluate_agent(load_agent(tmp_path / "f32"), episodes=1)
        saved = torch.get_default_dtype()
        torch.set_default_dtype(torch.float64)
        try:
            got = _deterministic(run_training(cfg, tmp_path / "f64", progress=False))
            again = evaluate_agent(load_agent(tmp_path / "f32"), episodes=1)
            assert torch.get_default_dtype() == torch.float64  # the caller's, untouched
        finally:
            torch.set_default_dtype(saved)
    assert got.keys() == expected.keys()
    for name in expected:
        assert got[name].equals(expected[name]), name
    assert again.equals(played)
