"""Where the CheckpointWarning for a checkpoint without a checksum points (session 26):
at the user's line that called run_training, as maxminq's other warnings do, not at a
line of deep/train.py (whose source Python showed under the warning)."""

from __future__ import annotations

import warnings

import sweep_kinds as helpers
import torch

from maxminq.deep.config import TrainConfig
from maxminq.deep.policy import torch_save
from maxminq.deep.run_folder import CheckpointWarning
from maxminq.deep.train import run_training

_, _KW = helpers.tiny_train(120, bias_every=60)


def test_the_no_checksum_warning_names_the_callers_line(tmp_path) -> None:
    """A run stopped at step 60, its checkpoint's sha256 removed (as an older maxminq wrote
    it), then resumed from here: the warning's file is this test file and its line the
    run_training call's (stacklevel=2 named deep/train.py)."""
    cfg = TrainConfig(**_KW)
    out = tmp_path / "run"
    with torch.random.fork_rng():
        run_training(cfg, out, progress=False, stop_after=60)
    ckpt = out / "checkpoint" / "state.pt"
    state = torch.load(ckpt, weights_only=True)
    assert state.pop("sha256", None) is not None
    torch_save(state, ckpt)
    with warnings.catch_warnings(record=True) as caught, torch.random.fork_rng():
        warnings.simplefilter("always")
        line = _line_below()
        run_training(cfg, out, progress=False)
    ours = [w for w in caught if w.category is CheckpointWarning]
    assert len(ours) == 1, [str(w.message) for w in caught]
    assert "has no checksum" in str(ours[0].message)
    assert (ours[0].filename, ours[0].lineno) == (__file__, line)


def _line_below() -> int:
    """The line number just below the caller's line."""
    import sys

    return sys._getframe(1).f_lineno + 1
