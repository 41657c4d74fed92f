"""NumPy and torch give one bootstrap on the values of a diverged run: NaN, +-inf, signed
zeros and ties, in float64 and float32, for every operator and member/action count (the
compiled twins are checked on the same pool in test_operators_inputs.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from maxminq import operators as ops

POOL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.0])
FIXED = {"q_learning": 1, "bias_corrected": 1, "double_q": 2, "weighted_double_q": 2}
PARAMS = {"bias_corrected": {"sigma": 0.5}, "weighted_double_q": {"c": 2.0}}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_numpy_and_torch_agree_on_nan_inf_ties_and_one_action(dtype) -> None:
    rng = np.random.default_rng(11)
    for name in ops.OPERATORS:
        for n in [FIXED[name]] if name in FIXED else [1, 2, 3, 5]:
            for a in (1, 2, 4):
                q = rng.choice(POOL, size=(500, n, a)).astype(dtype)
                with np.errstate(invalid="ignore"):
                    want = ops.bootstrap(name, q, **PARAMS.get(name, {}))
                got = ops.bootstrap(name, torch.from_numpy(q), **PARAMS.get(name, {}))
                assert got.numpy().dtype == want.dtype == dtype, (name, n, a)
                # equal as numbers (a zero's sign may differ), NaN where NumPy gives NaN
                np.testing.assert_array_equal(got.numpy(), want, err_msg=f"{name} N={n} A={a}")
