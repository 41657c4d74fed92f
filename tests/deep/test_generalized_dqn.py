"""A G of one's own (or any library operator) in the deep agents: ``generalized-dqn``, the
paper's Generalized Q-learning (section 6) with N online and N target nets as maxmin-dqn,
bootstrapping with ``TrainConfig.operator``."""

from __future__ import annotations

import importlib
import json
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
import torch
from generalized_runs import _small
from user_modules import user_module

from maxminq.cli import main
from maxminq.deep import run_training
from maxminq.deep.agents import Learner, behaviour_values
from maxminq.deep.policy import evaluate_agent, load_agent
from maxminq.errors import UsageError

MODULE = "own_ops_deep21"


# The user's module: a G blending min and mean over the N nets (with a keyword), and three
# that the check on torch zeros must refuse.
SOURCE = textwrap.dedent(
    """
    import numpy as np

    def blend_q(q, w=0.5):
        return (w * q.amin(dim=-2) + (1 - w) * q.mean(dim=-2)).amax(dim=-1)

    def per_action(q):
        return q.amin(dim=-2)  # (B, A): forgot the max over actions

    def numpy_only(q):
        return np.median(np.asarray(q), axis=-2).max(axis=-1)

    def nan_g(q):
        return q.amax(dim=-1).amax(dim=-1) / 0.0 * 0.0

    def needs_numpy_method(q):
        return q.ptp(axis=-2).max(axis=-1)
    """
)


@pytest.fixture
def own_ops(tmp_path):
    """The user's module, importable as ``own_ops_deep21`` for the test, forgotten after."""
    with user_module(tmp_path / "user", MODULE, SOURCE) as name:
        yield importlib.import_module(name)


def _same_run(a: dict[str, pd.DataFrame], b: dict[str, pd.DataFrame], out_a, out_b) -> None:
    """Returns, losses, bias and test episodes equal to the last bit, and the final nets."""
    assert set(a) == set(b)
    for name in a:
        x, y = a[name], b[name]
        if "steps_per_s" in x:  # wall-clock speed
            x, y = x.drop(columns="steps_per_s"), y.drop(columns="steps_per_s")
        pd.testing.assert_frame_equal(x, y, check_exact=True)
    wa = torch.load(out_a / "model.pt", weights_only=True)["online"]
    wb = torch.load(out_b / "model.pt", weights_only=True)["online"]
    assert torch.equal(wa, wb)


@pytest.mark.parametrize(
    "agent,n,members", [("maxmin-dqn", 2, 1), ("ensemble-dqn", 3, 2)], ids=["maxmin", "ensemble"]
)
def test_generalized_with_a_library_operator_is_that_agent_bit_for_bit(
    tmp_path, agent: str, n: int, members: int
) -> None:
    """generalized-dqn with operator='maxmin' is maxmin-dqn (returns, losses, bias, final
    parameters), 'ensemble' is ensemble-dqn, on the same seeds (also with two members
    updated per step)."""
    op = agent.removesuffix("-dqn")
    fixed = run_training(
        _small(agent=agent, n=n, update_members=members), tmp_path / "a", progress=False
    )
    general = run_training(
        _small(n=n, operator=op, update_members=members), tmp_path / "g", progress=False
    )
    assert fixed["metrics"]["loss"].notna().any()  # it learned
    _same_run(fixed, general, tmp_path / "a", tmp_path / "g")
    saved = json.loads((tmp_path / "g" / "config.json").read_text())
    assert (saved["agent"], saved["operator"]) == ("generalized-dqn", op)
    assert "operator" not in json.loads((tmp_path / "a" / "config.json").read_text())


def test_own_g_as_function_and_as_module_string_is_one_run_and_resumes(tmp_path, own_ops) -> None:
    """An own G passed as the function and as 'module:function' trains the same run (the
    second one stopped halfway and resumed); the run folder names it; acting and evaluating
    need no import of it, resuming does (that G reaches the targets: the next test)."""
    kw = dict(operator=own_ops.blend_q, op_kwargs={"w": 0.25})
    straight = run_training(_small(**kw), tmp_path / "fn", progress=False)
    cfg = _small(operator=f"{MODULE}:blend_q", op_kwargs={"w": 0.25}, checkpoint_every=100)
    assert run_training(cfg, tmp_path / "str", progress=False, stop_after=120) == {}
    resumed = run_training(cfg, tmp_path / "str", progress=False)
    _same_run(straight, resumed, tmp_path / "fn", tmp_path / "str")
    saved = json.loads((tmp_path / "fn" / "config.json").read_text())
    assert saved["operator"] == f"{MODULE}:blend_q" and saved["op_kwargs"] == {"w": 0.25}

    # The module gone: the saved run acts on the mean of its nets, and evaluates.
    sys.modules.pop(MODULE)
    sys.path.remove(str(tmp_path / "user"))
    agent = load_agent(tmp_path / "fn")
    assert repr(agent).startswith(
        f"TrainedAgent(agent='generalized-dqn', operator='{MODULE}:blend_q', n=2, "
    )
    obs = np.linspace(-0.1, 0.1, 4, dtype=np.float32)
    assert agent.act(obs, seed=1) in (0, 1)
    assert len(evaluate_agent(agent, seeds=[0], episodes=1)) == 1
    # ... but resuming (here: extending) needs the G: a one-line error naming the option.
    with pytest.raises(UsageError, match=rf"^--operator: .*cannot import '{MODULE}'") as err:
        run_training(_small(operator=f"{MODULE}:blend_q", steps=260), tmp_path / "str")
    assert "\n" not in str(err.value)


def test_own_g_reaches_the_targets_per_seed_and_acting_is_the_mean(own_ops) -> None:
    """The bootstrap is G on each seed's (B, N, A) target values with its keywords; the
    behaviour policy of an own G is the mean over the N nets (its bias probe G itself), of a
    library operator with an estimate its action_values (maxmin: the min), of one without
    (weighted_double_q) the mean."""
    gens = [torch.Generator().manual_seed(s) for s in (3, 4)]
    args = ("mlp", (4,), 3, "adam", 1e-3)

    def learner(op: str, **kw) -> Learner:
        return Learner("generalized-dqn", 3, gens, *args, operator=op, hidden=(8,), **kw)

    own = learner(f"{MODULE}:blend_q", op_kwargs={"w": 0.7})
    next_obs = torch.randn((2, 5, 4), generator=torch.Generator().manual_seed(0))
    q = own.target_q(next_obs)  # (S, B, N, A)
    by_hand = (0.7 * q.amin(dim=2) + 0.3 * q.mean(dim=2)).amax(dim=-1)
    assert torch.equal(own.bootstrap(next_obs), by_hand)

    obs = next_obs[:, :1]
    nets = own.online.forward_shared(obs, 3).reshape(2, 3, 1, 3)  # (S, N, 1, A)
    assert torch.equal(
        behaviour_values("generalized-dqn", own.online, 3, obs, own.operator), nets.mean(dim=1)
    )
    assert torch.equal(
        behaviour_values("generalized-dqn", own.online, 3, obs, "maxmin"), nets.amin(dim=1)
    )
    assert torch.equal(
        behaviour_values("generalized-dqn", own.online, 3, obs, "weighted_double_q"),
        nets.mean(dim=1),
    )
    action = torch.tensor([0, 2])
    qa = own.target_q(obs)[:, 0][[0, 1], :, action]  # (S, B=1, N, A) -> (S, N) at the action
    assert torch.allclose(  # the bias probe: G itself (since 2026-11-24), not the mean
        own.estimate(obs[:, 0], action), 0.7 * qa.amin(dim=1) + 0.3 * qa.mean(dim=1)
    )


@pytest.mark.parametrize(
    "name,words",
    [
        (
            "per_action",
            "must map q of shape (B, N, A) to (B,), one value per sample: got shape (16, 2)",
        ),
        (
            "numpy_only",
            "returned a value of type ndarray for torch zeros of shape (16, 2, 2); the deep "
            "agents need a torch tensor",
        ),
        ("nan_g", "gave nan on torch zeros of shape (16, 2, 2)"),
        ("needs_numpy_method", "failed on torch zeros of shape (16, 2, 2)"),
    ],
)
def test_a_g_that_cannot_take_the_targets_is_refused_before_any_work(
    tmp_path, own_ops, capsys, name: str, words: str
) -> None:
    """Wrong shape, NumPy-only, NaN on zeros, or failing: one line naming the operator and
    the option, before the run folder exists (run_training and maxminq train alike)."""
    out = tmp_path / "run"
    with pytest.raises(UsageError) as err:
        run_training(_small(operator=f"{MODULE}:{name}"), out, progress=False)
    message = str(err.value)
    assert message.startswith(f"--operator: {MODULE}:{name} ") and words in message, message
    assert "\n" not in message and not out.exists()
    argv = ["train", "--env", "CartPole-v1", "--agent", "generalized-dqn", "--n", "2"]
    argv += ["--operator", f"{MODULE}:{name}", "--batch-size", "16", "--out", str(out)]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip().endswith(message) and not out.exists()


def test_a_g_without_an_importable_name_is_refused_at_the_start(tmp_path) -> None:
    """A lambda (or a function of __main__, a closure) could not be named by the run folder,
    so --resume could not find it: refused in one line saying to define it in a module."""
    with pytest.raises(
        UsageError, match=r"^--operator: G function '<lambda>' cannot be named.*module"
    ) as err:
        run_training(_small(operator=lambda q: q.amax(-1).amax(-1)), tmp_path / "run")
    assert "\n" not in str(err.value) and not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    "kw,words",
    [
        (dict(), "--operator: generalized-dqn needs its G"),
        (dict(operator="maxmn"), "--operator: unknown operator 'maxmn'"),
        (dict(operator=3), "--operator: expected a library operator"),
        (dict(operator="bias_corrected", n=1), "--op-kwargs: bias_corrected needs sigma"),
        (
            dict(operator="maxmin", op_kwargs={"c": 1.0}),
            "--op-kwargs: maxmin takes no parameters, not c",
        ),
        (
            dict(operator="weighted_double_q", op_kwargs={"sigma": 1.0}),
            "--op-kwargs: weighted_double_q takes c, not sigma",
        ),
        (dict(operator="maxmin", op_kwargs=[1]), "--op-kwargs: expected a mapping"),
        (
            dict(agent="maxmin-dqn", operator="ensemble"),
            "--operator: maxmin-dqn bootstraps with maxmin; for ensemble use --agent "
            "generalized-dqn",
        ),
        (
            dict(agent="dqn", n=1, op_kwargs={"w": 1}),
            "--op-kwargs: dqn's operator q_learning takes none",
        ),
    ],
)
def test_operator_options_are_checked_in_one_line(kw, words: str) -> None:
    """generalized-dqn needs a G; a library operator's keywords are its own; another agent
    takes only its own operator (and no keywords)."""
    with pytest.raises(UsageError) as err:
        _small(**kw).resolve()
    assert str(err.value).startswith(words) and "\n" not in str(err.value), str(err.value)


def test_library_operator_checks_run_on_zeros_too(tmp_path) -> None:
    """A library operator that cannot take N nets (q_learning with N = 2) or refuses its
    keyword's value is refused before any work, naming --operator (the keyword's value:
    --op-kwargs, as maxminq theory and an unknown or missing keyword name it)."""
    for kw, words, option in [
        (dict(operator="q_learning"), "exactly 1 estimator(s)", "--operator"),
        (dict(operator="weighted_double_q", op_kwargs={"c": -1.0}), "c must be > 0", "--op-kwargs"),
    ]:
        with pytest.raises(UsageError, match=f"^{option}: ") as err:
            run_training(_small(**kw), tmp_path / "run", progress=False)
        assert words in str(err.value) and not (tmp_path / "run").exists()


def test_an_agents_own_operator_is_the_same_run_as_without() -> None:
    """maxmin-dqn with operator='maxmin' (or the function) resolves to the config without:
    same run id, same run folder key."""
    from maxminq import operators

    plain = _small(agent="maxmin-dqn").resolve()
    for op in ("maxmin", operators.maxmin):
        given = _small(agent="maxmin-dqn", operator=op).resolve()
        assert given.result_key() == plain.result_key()
        assert "operator" not in json.loads(given.result_key())


def test_cli_trains_generalized_dqn_with_an_own_operator_and_suggests_it(
    tmp_path, own_ops, capsys
) -> None:
    """maxminq train --agent generalized-dqn --operator module:function --op-kwargs JSON
    trains and records the operator; maxminq evaluate reads it back without the module; a
    misspelt agent is guessed."""
    out = tmp_path / "run"
    argv = ["train", "--env", "CartPole-v1", "--agent", "generalized-dqn", "--n", "2"]
    argv += ["--operator", f"{MODULE}:blend_q", "--op-kwargs", '{"w": 0.4}', "--steps", "150"]
    argv += ["--learning-starts", "50", "--batch-size", "16", "--hidden", "16"]
    argv += ["--eval-episodes", "1", "--no-progress", "--no-plot", "--out", str(out)]
    assert main(argv) == 0
    saved = json.loads((out / "config.json").read_text())
    assert saved["operator"] == f"{MODULE}:blend_q" and saved["op_kwargs"] == {"w": 0.4}
    sys.modules.pop(MODULE)
    sys.path.remove(str(tmp_path / "user"))
    capsys.readouterr()
    assert main(["evaluate", str(out), "--episodes", "1", "--no-progress"]) == 0
    bad = [
        "train",
        "--env",
        "CartPole-v1",
        "--agent",
        "generalised-dqn",
        "--out",
        str(tmp_path / "b"),
    ]
    assert main(bad) == 2
    err = capsys.readouterr().err
    assert "did you mean generalized-dqn?" in err and "ensemble-dqn, generalized-dqn" in err


def test_a_sweep_config_passes_the_operator_to_a_deep_run() -> None:
    """A sweep's deep settings take operator and op_kwargs as TrainConfig does: the resolved
    settings (the run id's) hold them; a bad one names the setting."""
    from maxminq.experiments.registry import SettingsError, validate_deep

    settings = {"env_id": "CartPole-v1", "agent": "generalized-dqn", "n": 2}
    resolved = validate_deep({**settings, "operator": "weighted_double_q", "op_kwargs": {"c": 2}})
    assert (resolved["operator"], resolved["op_kwargs"]) == ("weighted_double_q", {"c": 2})
    assert type(resolved["op_kwargs"]["c"]) is float  # {"c": 2} and {"c": 2.0}: one run id
    assert "operator" not in validate_deep({**settings, "agent": "maxmin-dqn"})
    with pytest.raises(SettingsError) as err:
        validate_deep({**settings, "operator": "no_such_module_21:g"})
    assert err.value.key == "operator" and "cannot import" in str(err.value)


def test_a_sweeps_bad_g_is_refused_when_checked_even_after_a_good_one_on_that_env(
    own_ops,
) -> None:
    """The environment check runs once per environment in a process; the G's try on torch
    zeros runs for every operator: a sweep of a good and a bad G on one environment fails
    before it starts, naming the setting."""
    from maxminq.experiments.registry import SettingsError, validate_deep

    settings = {"env_id": "CartPole-v1", "agent": "generalized-dqn", "n": 2, "batch_size": 8}
    validate_deep({**settings, "operator": f"{MODULE}:blend_q"})
    with pytest.raises(SettingsError) as err:
        validate_deep({**settings, "operator": f"{MODULE}:per_action"})
    assert err.value.key == "operator" and "must map q of shape (B, N, A) to (B,)" in str(err.value)
