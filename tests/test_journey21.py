"""Journey 21: a bias researcher's soft-min G, from the docs alone.

The docs' soft-min (docs/operators-and-theory.md, 'A G with exp and log') must be the stable
form it claims to be, in float32 torch (generalized-dqn) and float64 NumPy (the other tools),
and the sweep config of docs/sweeps.md that runs it must expand to its 2 betas x 2 N next to
Maxmin."""

import math
import re
import sys
from pathlib import Path

import mpmath
import numpy as np
import pytest
import torch

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _block(page: str, lang: str, marker: str) -> str:
    """The fenced ``lang`` block of ``page`` that contains ``marker``."""
    text = (DOCS / page).read_text(encoding="utf-8")
    blocks = [b for b in re.findall(rf"```{lang}\n(.*?)```", text, re.S) if marker in b]
    assert len(blocks) == 1, f"{page}: one {lang} block with {marker!r}, found {len(blocks)}"
    return blocks[0]


@pytest.fixture(scope="module")
def softmin_q():
    """The docs' softmin_q, defined as a user copying it into my_ops.py would."""
    namespace: dict = {"np": np}
    exec(_block("operators-and-theory.md", "python", "def softmin_q"), namespace)
    return namespace["softmin_q"]


def _reference(q: np.ndarray, beta: float) -> np.ndarray:
    """max_a -(1/beta) log mean_i exp(-beta q_ia), in 50-digit arithmetic (mpmath)."""
    mpmath.mp.dps = 50
    out = np.empty(q.shape[0])
    for k, sample in enumerate(q):
        soft = []
        for a in range(sample.shape[1]):
            mean = mpmath.fsum(
                mpmath.exp(-mpmath.mpf(beta) * mpmath.mpf(float(x))) for x in sample[:, a]
            )
            soft.append(-mpmath.log(mean / sample.shape[0]) / beta)
        out[k] = float(max(soft))
    return out


@pytest.mark.parametrize("beta", [1e-6, 1e-2, 1.0, 20.0, 1e4])
def test_docs_softmin_is_stable_in_float32_and_float64(softmin_q, beta):
    rng = np.random.default_rng(0)
    q = rng.uniform(-20.0, 20.0, size=(40, 4, 3))  # CartPole-sized values: beta |Q| up to 4e5
    ref = _reference(q, beta)
    got64 = softmin_q(q, beta=beta)
    got32 = softmin_q(torch.from_numpy(q).float(), beta=beta)
    assert isinstance(got64, np.ndarray) and got64.shape == (40,)
    assert isinstance(got32, torch.Tensor) and got32.dtype == torch.float32
    assert np.abs(got64 - ref).max() < 1e-9
    # float32 values of size 20 carry ~2e-6 of rounding; the plain logsumexp form is 0.18
    # off at beta = 1e-6 and the form as written is inf from beta = 10 on
    assert np.abs(got32.double().numpy() - ref).max() < 2e-5


def test_docs_softmin_meets_assumption_1_and_its_bounds(softmin_q):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(5000, 4, 3))
    y = x + rng.uniform(-1, 1, size=x.shape)
    beta = 3.0
    equal = np.repeat(x[:, :1], 4, axis=1)
    assert np.allclose(softmin_q(equal, beta=beta), x[:, 0].max(axis=-1))
    assert (
        abs(softmin_q(x, beta=beta) - softmin_q(y, beta=beta))
        <= abs(x - y).max(axis=(1, 2)) + 1e-12
    ).all()
    g = softmin_q(x, beta=beta)
    lo = x.min(axis=-2).max(axis=-1)  # Maxmin's target
    assert (g >= lo - 1e-12).all() and (g <= lo + math.log(4) / beta + 1e-12).all()
    assert (g <= x.mean(axis=-2).max(axis=-1) + 1e-12).all()  # below Ensemble's (Jensen)


def test_docs_softmin_bias_moves_from_ensemble_to_maxmin(softmin_q):
    from maxminq.theory import operator_bias, operator_expected_bias

    m, n = 8, 4
    ens = float(operator_expected_bias("ensemble", m, n, 1.0, 1.0))
    mm = float(operator_expected_bias("maxmin", m, n, 1.0, 1.0))
    biases = [
        operator_bias(softmin_q, m, n, 1.0, 1.0, 20_000, np.random.default_rng(0), beta=b)
        for b in (1.0, 5.0, 20.0, 100.0)
    ]
    means = [e.bias for e in biases]
    assert all(np.isfinite(means))
    assert ens > means[0] > means[1] > means[2] > means[3] > mm
    # the target lies within log(N)/beta of Maxmin's: so does its mean, up to 4 SE
    assert means[3] - mm < math.log(n) / 100 + 4 * biases[3].bias_se


def test_docs_softmin_sweep_config_expands_2_betas_x_2_n_next_to_maxmin(
    softmin_q, tmp_path, monkeypatch
):
    from maxminq.experiments.config import load_config

    (tmp_path / "my_ops.py").write_text(
        "import numpy as np\n\n" + _block("operators-and-theory.md", "python", "def softmin_q")
    )
    (tmp_path / "softmin.yaml").write_text(_block("sweeps.md", "yaml", "softmin_q"))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    try:
        config = load_config(tmp_path / "softmin.yaml", "quick")
    finally:
        sys.modules.pop("my_ops", None)
    settings = {
        (
            r.settings["algorithm"],
            r.settings["n"],
            r.settings["mu"],
            str(r.settings.get("op_kwargs")),
        )
        for r in config.runs
    }
    assert len(config.runs) == len(settings) == 12
    own = {(n, mu, kw) for a, n, mu, kw in settings if a == "my_ops:softmin_q"}
    assert {kw for _, _, kw in own} == {str({"beta": 5}), str({"beta": 20})}
    assert {n for n, _, _ in own} == {2, 4} and len(own) == 8
