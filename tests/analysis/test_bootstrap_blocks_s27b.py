"""The bootstrap of one stratum in blocks of replicates: the same interval as drawn in one
go (recomputed by hand with plain NumPy), holding a block at a time. Since 6584bcc the toy
MDP table draws ``maxminq report --reps`` replicates (up to 100,000) of up to 5,000 runs:
5e8 resampled values, 4 GB per copy, at once."""

from __future__ import annotations

import tracemalloc

import numpy as np

from maxminq.analysis import tables as T


def test_one_stratum_bootstrap_in_blocks_is_the_same_interval_in_bounded_memory() -> None:
    x = np.random.default_rng(5).exponential(1.0, 1000)
    reps, n, cut = 2000, x.size, x.size // 4
    # by hand, in one go: reps resamples of the runs, each one's IQM, the 2.5/97.5% quantiles
    idx = np.random.default_rng([0, 3]).integers(0, n, size=(reps, n))
    boot = np.sort(x[idx], axis=1)[:, cut : n - cut].mean(axis=1)
    expected = np.quantile(boot, [0.025, 0.975])
    del idx, boot
    tracemalloc.start()
    try:
        got = T.stratified_bootstrap_ci(
            x, reps=reps, rng=np.random.default_rng([0, 3]), block=50_000
        )
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert np.allclose(got, expected, rtol=1e-12)
    # 2,000 x 1,000 values in one go: 16 MB of indices and 16 MB of values at least; in
    # blocks of 50,000 values, 0.4 MB each
    assert peak < 8e6, peak
    # the default block holds this case in one go: the same interval
    assert np.allclose(
        T.stratified_bootstrap_ci(x, reps=reps, rng=np.random.default_rng([0, 3])),
        expected,
        rtol=1e-12,
    )
