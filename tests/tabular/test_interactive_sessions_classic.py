"""The classic experiments' run functions driven from a notebook or an interactive session
(session 23): a G function defined in the session itself, in ``__main__`` with no file (code
fed on stdin, ``python -``, as a notebook's cells are)."""

from __future__ import annotations

from helpers import stdin_session


def test_a_g_defined_in_the_session_runs_the_toy_mdp_and_mountain_car():
    """``run_toy_mdp(algorithm=median_q)`` with ``median_q`` defined in a notebook cell was
    refused ("define it at the top level of a module"), although the string
    ``'__main__:median_q'`` ran: the run functions call G in this process, where
    ``__main__`` has it. The function now runs under that name, the same runs as the
    string's. A function redefined since it was taken (the cell run again), a lambda: one
    line each, saying what to do."""
    code = """
    import numpy as np, pandas as pd
    from maxminq.errors import UsageError
    from maxminq.tabular.toy_mdp import run_toy_mdp
    from maxminq.linear.mountain_car import run_mountain_car

    def median_q(q, w=1.0):
        return (w * np.median(q, axis=-2) + (1 - w) * q.mean(axis=-2)).max(axis=-1)

    toy = dict(mu=-0.1, n=3, runs=2, episodes=4, seed=1, op_kwargs={"w": 0.5})
    by_function = run_toy_mdp(algorithm=median_q, **toy)
    by_name = run_toy_mdp(algorithm="__main__:median_q", **toy)
    pd.testing.assert_frame_equal(by_function, by_name)
    print(by_function["algorithm"].unique().tolist(), len(by_function))
    mc = dict(n=3, sigma2=1.0, step_size=0.1, runs=2, episodes=2, seed=0, max_steps=30)
    frame = run_mountain_car(algorithm=median_q, **mc)
    pd.testing.assert_frame_equal(frame, run_mountain_car(algorithm="__main__:median_q", **mc))
    print(frame["algorithm"].unique().tolist(), len(frame))

    taken = median_q
    def median_q(q):  # the cell run again, edited
        return np.median(q, axis=-2).max(axis=-1)
    for g in (taken, lambda q: q.max(axis=(-2, -1))):
        try:
            run_toy_mdp(algorithm=g, **toy)
        except UsageError as err:
            print(err)
    """
    out = stdin_session(code).stdout.splitlines()
    assert out[0] == "['__main__:median_q'] 8", out
    assert out[1] == "['__main__:median_q'] 4", out
    assert out[2] == (
        "algorithm: G function 'median_q' was redefined since it was taken (its cell run "
        "again, say); pass median_q as it is now"
    )
    assert out[3].startswith("algorithm: G function '<lambda>' cannot be named (a lambda or a ")
    assert "define it with def at the top level of your notebook or script" in out[3]
    assert len(out) == 4, out
