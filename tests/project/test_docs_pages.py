"""Code and claims of the docs/ pages (operators and theory, deep agents) run and checked:
the soft-min and median G, the own-operator example."""

from __future__ import annotations

import math
import re
import sys

import mpmath
import numpy as np
import pytest
import torch
from docs_text import section
from helpers import REPO
from scipy import integrate

from maxminq.theory import operator_expected_bias


def _max_of_medians_of_3(m: int) -> float:
    """E[max of m medians of 3 U(-1, 1)], by hand: one median's CDF is 3F^2 - 2F^3 with
    F = (x + 1) / 2, and E[max] = 1 - int_{-1}^{1} CDF^m dx."""

    def cdf(x: float) -> float:
        f = (x + 1.0) / 2.0
        return 3.0 * f * f - 2.0 * f**3

    return 1.0 - integrate.quad(lambda x: cdf(x) ** m, -1.0, 1.0)[0]


DOCS = REPO / "docs"


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


def test_docs_say_where_an_overflowing_gs_divergence_is_named() -> None:
    """The page said a diverged generalized-dqn seed gave 'no other hint'; runs.csv's
    diverged_cause and maxminq train's summary name G. The quoted cause has the form
    Learner.divergence_cause writes (deep/agents.py)."""
    page = REPO / "docs" / "operators-and-theory.md"
    text = " ".join(page.read_text().split())
    assert "no other hint" not in text
    assert "`diverged_cause`" in text and "maxminq train`'s summary" in text
    quoted = re.search(r"`(G my_ops:softmin_q with \{'beta': 20\} gave [^`]*)`", text)
    assert quoted is not None
    source = (REPO / "src/maxminq/deep/agents.py").read_text()
    assert 'gave {gs[bad][0].item()} on finite target-net values "' in source
    assert quoted.group(1).endswith("gave inf on finite target-net values in [lo, hi]")


def test_the_docs_median_q_is_one_operator_for_numpy_and_torch() -> None:
    # One my_ops.py for every tool: the page's median_q gives a float64 NumPy value for NumPy
    # input and a torch tensor for torch input, the same operator at an even N (torch's
    # median(dim=) is the lower middle value there, np.median the average of the two).
    import numpy as np
    import torch
    from docs_text import section

    text = section("operators-and-theory", "An operator of your own")
    block = text.split("```python\n", 1)[1].split("```", 1)[0]
    scope: dict = {}
    exec(block.split("\nrng = ", 1)[0], scope)  # noqa: S102 (the docs' own definition)
    median_q = scope["median_q"]
    q = np.random.default_rng(0).normal(size=(6, 4, 3))  # N = 4: even
    for w in (1.0, 0.7):
        want = w * np.sort(q, axis=-2)[..., 1:3, :].mean(axis=-2) + (1 - w) * q.mean(axis=-2)
        np.testing.assert_allclose(median_q(q, w), want.max(axis=-1), rtol=0, atol=1e-12)
        got = median_q(torch.tensor(q, dtype=torch.float32), w)
        assert isinstance(got, torch.Tensor) and got.dtype == torch.float32
        np.testing.assert_allclose(got.numpy(), want.max(axis=-1), rtol=0, atol=1e-6)
    words = " ".join(text.split())
    assert "examples/own_operator.py" in words and "lower of the two middle values" in words


def test_docs_own_operator_example_runs_and_its_numbers_are_what_it_gives() -> None:
    """The 'An operator of your own' block of docs/operators-and-theory.md runs (it needs
    operator_bias to take a G function), and the numbers the page quotes are its own."""
    text = section("operators-and-theory", "An operator of your own")
    block = text.split("```python\n", 1)[1].split("```", 1)[0]
    scope: dict = {}
    exec(block, scope)  # noqa: S102 (the docs' own example)
    est, res, mdp = scope["est"], scope["res"], scope["mdp"]
    exact = _max_of_medians_of_3(8)
    assert abs(est.bias - exact) < 4 * est.bias_se
    assert bool(scope["equal"]) and bool(scope["lipschitz"])
    q_star = mdp.q_star()
    assert res.errors[-1] < 0.05 * np.abs(q_star).max()
    words = " ".join(text.split())
    assert f"from {res.errors[0]:.2f} at the first record (sweep {res.error_updates[0]})" in words
    assert f"to {res.errors[-1]:.3f} at sweep 5,000" in words
    assert f"max |Q*| = {np.abs(q_star).max():.2f}" in words
    assert f"`est.bias` = {est.bias:.3f} +- {est.bias_se:.3f} (exactly {exact:.3f}" in words
    assert f"Ensemble's {operator_expected_bias('ensemble', 8, 3):.3f}" in words
    assert f"Maxmin's {operator_expected_bias('maxmin', 8, 3):.3f}" in words


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


def test_the_deep_agents_page_defines_the_same_median_q_as_the_theory_page() -> None:
    # One my_ops.py for every tool: docs/deep-agents.md's median_q is the theory page's, for
    # NumPy and torch input alike (it was a torch-only median of another kind at even N).
    import numpy as np
    import torch
    from docs_text import section

    def defined(page: str, heading: str):
        text = section(page, heading)
        block = text.split("```python\n", 1)[1].split("```", 1)[0]
        scope: dict = {}
        exec(block.split("\nrng = ", 1)[0], scope)  # noqa: S102 (the docs' own definition)
        return scope["median_q"]

    deep = defined("deep-agents", "A G of your own: Generalized DQN")
    theory = defined("operators-and-theory", "An operator of your own")
    q = np.random.default_rng(1).normal(size=(5, 4, 3))  # N = 4: even
    for w in (1.0, 0.7):
        np.testing.assert_array_equal(deep(q, w), theory(q, w))
        got = deep(torch.tensor(q, dtype=torch.float32), w)
        assert isinstance(got, torch.Tensor) and got.shape == (5,)
        np.testing.assert_allclose(got.numpy(), theory(q, w), rtol=0, atol=1e-6)
