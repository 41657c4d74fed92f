"""``maxminq train --agent generalized-dqn --operator double_q`` without --n runs with the
operator's own N, as ``maxminq experiment --algorithms double_q`` does (n = 2): it got the
registry's N for Maxmin (3 on CartPole) and was refused, '--operator: weighted_double_q
failed on torch zeros ...: q must stack exactly 2 estimator(s) on axis -2, got 3'. An N
given that the operator cannot take is still refused, naming --operator."""

from __future__ import annotations

from maxminq.cli import main
from maxminq.deep.config import TrainConfig
from maxminq.tabular.agent import ALGORITHMS


def test_generalized_dqn_takes_its_fixed_n_operators_own_n(tmp_path, capsys):
    fixed = {name: spec.fixed_n for name, spec in ALGORITHMS.items() if spec.fixed_n}
    assert set(fixed) == {"q_learning", "bias_corrected", "double_q", "weighted_double_q"}
    for name, n in fixed.items():
        kwargs = {"sigma": 0.5} if name == "bias_corrected" else None
        cfg = TrainConfig(
            env_id="CartPole-v1", agent="generalized-dqn", operator=name, op_kwargs=kwargs
        )
        assert cfg.resolve().n == n, name
    maxmin = TrainConfig(env_id="CartPole-v1", agent="maxmin-dqn").resolve().n
    assert (
        TrainConfig(env_id="CartPole-v1", agent="generalized-dqn", operator="maxmin").resolve().n
        == maxmin
        == 3  # the registry's N for Maxmin on ids outside the paper (maxminq envs)
    )

    base = ["train", "--env", "CartPole-v1", "--agent", "generalized-dqn", "--no-progress"]
    base += ["--operator", "weighted_double_q", "--steps", "40", "--learning-starts", "10"]
    base += ["--eval-episodes", "0", "--no-plot"]
    assert main([*base, "--out", str(tmp_path / "two")]) == 0
    assert '"n": 2' in (tmp_path / "two" / "config.json").read_text()
    capsys.readouterr()
    assert main([*base, "--n", "3", "--out", str(tmp_path / "three")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("maxminq train: error: --operator: weighted_double_q") and "got 3" in err
    assert not (tmp_path / "three").exists()


def test_a_library_operators_bad_keyword_is_named_as_theory_names_it(tmp_path, capsys):
    """A value the operator refuses (weighted_double_q's c > 0, bias_corrected's sigma >= 0)
    is '--op-kwargs: ...' in train as in theory; train said '--operator: weighted_double_q
    failed on torch zeros of shape ...: ValueError: ...'."""
    theory = ["theory", "--m-max", "2", "--n-max", "2", "--samples", "3", "--no-progress"]
    train = ["train", "--env", "CartPole-v1", "--agent", "generalized-dqn", "--no-progress"]
    for operator, kwargs, says in [
        ("weighted_double_q", '{"c": -1}', "c must be > 0, got -1.0"),
        ("bias_corrected", '{"sigma": -1}', "sigma must be >= 0, got -1.0"),
    ]:
        given = ["--operator", operator, "--op-kwargs", kwargs]
        errors = []
        for argv in ([*train, *given], [*theory, *given]):
            assert main([*argv, "--out", str(tmp_path / "out")]) == 2
            errors.append(capsys.readouterr().err.partition(": error: ")[2])
        assert errors[0] == errors[1] == f"--op-kwargs: {operator}: {says}\n", errors
    assert not (tmp_path / "out").exists()
