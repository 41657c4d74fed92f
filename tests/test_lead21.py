"""Lead, session 21: generalized-dqn's check of a G of one's own before any work."""

from __future__ import annotations

import pytest

from maxminq.cli import main

NUMPY_ONLY = """

def min_q(q):
    return q.min(axis=-2).max(axis=-1)

def mixed(q, lam=0.5):
    return (lam * q.amin(dim=-2) + (1 - lam) * q.mean(dim=-2)).amax(dim=-1)
"""


@pytest.fixture
def own_ops(tmp_path, monkeypatch):
    (tmp_path / "lead21_ops.py").write_text(NUMPY_ONLY)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    import sys

    sys.modules.pop("lead21_ops", None)


def train(tmp_path, capsys, *options: str) -> tuple[int, str]:
    out = tmp_path / "run"
    argv = ["train", "--env", "CartPole-v1", "--agent", "generalized-dqn", "--n", "2"]
    code = main([*argv, "--steps", "200", *options, "--out", str(out)])
    assert not out.exists()
    return code, capsys.readouterr().err.strip()


def test_a_numpy_only_g_is_told_how_to_take_torch_tensors(own_ops, tmp_path, capsys):
    code, err = train(tmp_path, capsys, "--operator", "lead21_ops:min_q")
    assert code == 2 and "\n" not in err
    assert err.startswith(
        "maxminq train: error: --operator: lead21_ops:min_q failed on torch zeros"
    )
    assert "torch.as_tensor(g(q.numpy()))" in err


def test_a_misspelt_keyword_of_ones_own_g_names_it_and_the_ones_it_takes(own_ops, tmp_path, capsys):
    code, err = train(
        tmp_path, capsys, "--operator", "lead21_ops:mixed", "--op-kwargs", '{"lamb": 0.5}'
    )
    assert code == 2 and "\n" not in err
    assert "--op-kwargs: operator 'lead21_ops:mixed' has no parameter 'lamb'" in err
    assert "(its parameters: lam)" in err and "torch.as_tensor" not in err


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


def test_the_classic_experiments_and_the_deep_agents_say_alike_why_a_g_has_no_name(
    tmp_path, monkeypatch
) -> None:
    # One account (operators.unnamed_operator) for both: a G taken before its module was
    # reloaded was 'a lambda, a closure or a function of __main__' for the classic
    # experiments, which alone of the two did not tell it apart.
    import importlib

    from maxminq.deep import TrainConfig
    from maxminq.errors import UsageError
    from maxminq.tabular.agent import algorithm_name

    (tmp_path / "lead21_reload.py").write_text("def g(q):\n    return q.max(-1).max(-1)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("lead21_reload")
    old = module.g
    importlib.reload(module)
    with pytest.raises(UsageError) as classic:
        algorithm_name(old, "algorithm")
    with pytest.raises(UsageError) as deep:
        TrainConfig(env_id="CartPole-v1", agent="generalized-dqn", operator=old, n=2).resolve()
    said = "'lead21_reload:g' now names another object than the function given"
    assert said in str(classic.value) and said in str(deep.value)
    assert str(classic.value).endswith("pass algorithm='lead21_reload:g' (or the module's "
                                       "function as it is now)")  # fmt: skip
    assert "pass operator='lead21_reload:g'" in str(deep.value)
    assert algorithm_name(module.g, "algorithm") == "lead21_reload:g"


def soft_min_at_zero(q, beta=0.0):
    """A soft-min written from the formula: at beta = 0 it is 0/0 = NaN on every input."""
    import numpy as np

    with np.errstate(divide="ignore", invalid="ignore"):
        return (-np.log(np.exp(-beta * q).mean(axis=-2)) / beta).max(axis=-1)


def test_a_g_giving_nan_on_zeros_is_refused_before_any_work(tmp_path, monkeypatch, capsys):
    # It ran the toy MDP to exit 0 with NaN results and gave operator_bias a NaN bias, where
    # generalized-dqn already refused it ('G must give finite values for finite ones').
    import numpy as np

    from maxminq.theory import operator_bias

    with pytest.raises(ValueError, match=r"'soft_min_at_zero' gave nan on NumPy zeros"):
        operator_bias(soft_min_at_zero, 8, 4, 1.0, 1.0, 10, np.random.default_rng(0))
    (tmp_path / "lead21_soft.py").write_text(
        "import numpy as np\n\n"
        "def soft(q, beta=1.0):\n"
        "    with np.errstate(divide='ignore', invalid='ignore'):\n"
        "        return (-np.log(np.exp(-beta * q).mean(axis=-2)) / beta).max(axis=-1)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "toy"
    argv = ["experiment", "toy-mdp", "--algorithms", "lead21_soft:soft:4:beta=0"]
    code = main([*argv, "--runs", "2", "--episodes", "2", "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err and not out.exists()
    assert "--algorithms" in err and "G must give finite values for finite ones" in err


def test_finite_mdp_names_a_g_given_by_reference_as_the_user_named_it(tmp_path, monkeypatch):
    # own_operator takes the name to show (the classic experiments rewrote its messages'
    # "operator 'everything'" into the reference; FiniteMDP.learn showed the __name__).
    import numpy as np

    from maxminq.tabular.finite_mdp import random_mdp

    (tmp_path / "lead21_shape.py").write_text("def everything(q):\n    return q.max()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    mdp = random_mdp(4, 2, np.random.default_rng(0), gamma=0.8)
    with pytest.raises(ValueError, match=r"^operator 'lead21_shape:everything' must map q"):
        mdp.learn("lead21_shape:everything", 3, 1, 10, np.random.default_rng(1))
