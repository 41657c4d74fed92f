"""generalized-dqn with a G of one's own: a seed that diverged does not feed its non-finite
targets to the G, an own G's path equals the library's batched one bit for bit, and a G
returning whole numbers, a ``functools.partial``, another operator on resume or a G from
before its module was reloaded are refused (or named) before any work."""

from __future__ import annotations

import importlib
import textwrap

import pandas as pd
import pytest
from generalized_runs import _small
from user_modules import user_module

from maxminq.deep import run_training
from maxminq.deep.train import Trainer
from maxminq.errors import UsageError

MODULE = "own_ops_reading21"


SOURCE = textwrap.dedent(
    """
    import torch

    def mean_g(q):
        # Ensemble's G written by hand: max_a of the mean over the N nets
        return q.mean(dim=-2).amax(dim=-1)

    def finite_only(q):
        # a G that checks its input (as a user's debugging assert would)
        assert bool(torch.isfinite(q).all()), "non-finite targets"
        return q.mean(dim=-2).amax(dim=-1)

    def greedy_index(q):
        # a slip: the greedy action's index, not its value (int64 on zeros too)
        return q.mean(dim=-2).argmax(dim=-1)

    def as_float64(q):
        return q.double().mean(dim=-2).amax(dim=-1)
    """
)


@pytest.fixture
def own_ops(tmp_path):
    """The user's module, importable for the test, forgotten after."""
    with user_module(tmp_path / "user", MODULE, SOURCE) as name:
        yield importlib.import_module(name)


def _frames_equal(a: dict[str, pd.DataFrame], b: dict[str, pd.DataFrame]) -> None:
    for name in ("episodes", "metrics", "tests", "runs"):
        x, y = a[name], b[name]
        if "steps_per_s" in x:  # wall-clock speed
            x, y = x.drop(columns="steps_per_s"), y.drop(columns="steps_per_s")
        pd.testing.assert_frame_equal(
            x.reset_index(drop=True), y.reset_index(drop=True), check_exact=True
        )


def test_a_diverged_seeds_targets_do_not_reach_the_g_of_the_others(tmp_path, own_ops) -> None:
    """Seed 1's nets blow up at step 100: it is recorded as diverged and seed 0 goes on
    exactly as alone, with a G that asserts finite input (before, G was still called on the
    dead seed's targets, NaN once its target nets were synced, and the whole run failed)."""
    cfg = _small(operator=f"{MODULE}:finite_only").resolve()
    tr = Trainer(cfg)
    try:
        while tr.step < 100:
            tr.train_step()
        tr.learner.online.flat[2:4].fill_(float("inf"))  # seed 1's two members
        while tr.step < cfg.steps:  # target syncs at 120, 160: seed 1's targets non-finite
            tr.train_step()
        tr.evaluate()
        tables = tr.tables()
    finally:
        tr.close()
    runs = tables["runs"].set_index("seed")
    assert runs.loc[1, "status"] == "diverged" and runs.loc[1, "diverged_step"] == 101
    assert runs.loc[0, "status"] == "done"
    alone = run_training(_small(operator=f"{MODULE}:finite_only", seeds=[0]), tmp_path / "a")
    seed0 = {k: v[v["seed"] == 0] for k, v in tables.items()}
    _frames_equal(seed0, alone)


def test_an_own_g_on_each_seed_is_the_librarys_batched_g_bit_for_bit(tmp_path, own_ops) -> None:
    """An own G equal to Ensemble's (max_a mean_i), called on one seed's batch at a time,
    with acting and bias probes on the mean of the nets, trains ensemble-dqn's run (library
    operator on all seeds at once, its own acting path) to the last bit, three seeds."""
    kw = dict(n=3, seeds=[0, 1, 2], steps=160)
    library = run_training(_small(agent="ensemble-dqn", **kw), tmp_path / "e", progress=False)
    own = run_training(_small(operator=f"{MODULE}:mean_g", **kw), tmp_path / "g", progress=False)
    assert library["metrics"]["loss"].notna().any()  # it learned
    _frames_equal(library, own)


def test_a_g_returning_whole_numbers_is_refused_before_any_work(tmp_path, own_ops) -> None:
    """A G giving an action's index (int64) instead of a value was cast to float silently and
    trained on nonsense targets; now one line naming --operator and the dtype. A float64 G is
    accepted (its values are taken as float32): the same run as the float32 one."""
    out = tmp_path / "run"
    with pytest.raises(UsageError) as err:
        run_training(_small(operator=f"{MODULE}:greedy_index"), out, progress=False)
    message = str(err.value)
    assert message.startswith(f"--operator: {MODULE}:greedy_index returned torch.int64"), message
    assert "\n" not in message and not out.exists()
    f64 = run_training(_small(operator=f"{MODULE}:as_float64", steps=120), tmp_path / "d")
    f32 = run_training(_small(operator=f"{MODULE}:mean_g", steps=120), tmp_path / "f")
    assert f64["metrics"]["loss"].notna().any()
    _frames_equal(f64, f32)


def test_a_partial_is_refused_saying_to_pass_the_function_and_op_kwargs(own_ops) -> None:
    """functools.partial(G, w=0.7), the usual way to bind a parameter in Python, was refused
    as "'G' has no importable name (a lambda, a closure or ...)", none of which it is; now
    the line says the equivalent: the function and op_kwargs."""
    import functools

    from maxminq import operators

    cases = [
        (
            functools.partial(own_ops.mean_g),
            f"pass operator='{MODULE}:mean_g', op_kwargs={{}}",
        ),
        (
            functools.partial(operators.weighted_double_q, c=2.0),
            "pass operator='weighted_double_q', op_kwargs={'c': 2.0}",
        ),
    ]
    for g, fix in cases:
        with pytest.raises(UsageError) as err:
            _small(operator=g).resolve()
        message = str(err.value)
        assert message.startswith("--operator: a functools.partial cannot be named"), message
        assert message.endswith(fix) and "\n" not in message, message


def test_resuming_with_another_operator_or_op_kwargs_is_refused_naming_it(
    tmp_path, own_ops
) -> None:
    """A stopped generalized-dqn run resumed with another G, or other keywords, is refused in
    one line naming the option and the run's value (it would silently be another run)."""
    out = tmp_path / "run"
    cfg = _small(operator="weighted_double_q", op_kwargs={"c": 2}, checkpoint_every=50)
    assert run_training(cfg, out, progress=False, stop_after=80) == {}
    for kw, words in [
        (dict(op_kwargs={"c": 3}), '--op-kwargs {"c": 2.0} (now {"c": 3.0})'),
        (dict(operator=f"{MODULE}:mean_g", op_kwargs=None), "--operator weighted_double_q"),
    ]:
        changed = _small(**{**dict(operator="weighted_double_q", checkpoint_every=50), **kw})
        with pytest.raises(UsageError) as err:
            run_training(changed, out, progress=False, resume=True)
        message = str(err.value)
        assert message.startswith("--resume: the run in --out was made with other options: ")
        assert words in message and "\n" not in message, message


def test_a_g_from_before_its_module_was_reloaded_is_named_so(own_ops) -> None:
    """A notebook's G taken before importlib.reload of its module is no longer the module's
    function: it was refused as "has no importable name (a lambda, a closure or a function of
    __main__)", none of which it is; now the line says what happened and what to pass."""
    import importlib

    old = own_ops.mean_g
    importlib.reload(own_ops)
    with pytest.raises(UsageError) as err:
        _small(operator=old).resolve()
    message = str(err.value)
    assert message.startswith(
        f"--operator: '{MODULE}:mean_g' now names another object than the function given "
        "(its module was reloaded"
    ), message
    assert message.endswith(
        f"pass operator='{MODULE}:mean_g' (or the module's function as it is now)"
    )
    assert _small(operator=own_ops.mean_g).resolve().operator == f"{MODULE}:mean_g"
