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
