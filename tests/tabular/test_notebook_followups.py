"""Second reading of the classic run functions driven from a notebook or an interactive
session (session 23): a G defined in ``__main__`` (code fed on stdin, ``python -``, as a
notebook's cells are) with ``maxminq experiment``'s worker processes, in a class, bound in a
functools.partial, as a callable object, or deleted since it was taken."""

from __future__ import annotations

from helpers import stdin_session


def test_experiment_with_workers_refuses_a_session_g_before_any_work(tmp_path):
    """``maxminq.cli.main(["experiment", ..., "--algorithms", "__main__:median_q", "--workers",
    "2"])`` from a notebook: each spawned worker failed with "module '__main__' has no
    'median_q'" (the user had just defined it). Now one line before any work, naming the
    option and what to do; nothing is written (--workers 1 runs it: the run functions take
    it in this process, test_interactive_sessions_classic.py)."""
    code = """
    import numpy as np
    from maxminq.cli import main

    def median_q(q):
        return np.median(q, axis=-2).max(axis=-1)

    base = ["--algorithms", "__main__:median_q:3", "q_learning", "--runs", "2",
            "--episodes", "3", "--no-progress"]
    print("rc", main(["experiment", "toy-mdp", *base, "--mu", "-0.1", "--workers", "2",
                      "--out", "toy"]))
    print("rc", main(["experiment", "mountain-car", *base, "--sigma2", "1",
                      "--step-sizes", "0.1", "--max-steps", "20", "--workers", "2",
                      "--out", "mc"]))
    """
    proc = stdin_session(code, tmp_path)
    assert [line for line in proc.stdout.splitlines() if line.startswith("rc")] == [
        "rc 2",
        "rc 2",
    ], proc.stdout
    errors = [line for line in proc.stderr.splitlines() if "error" in line]
    assert len(errors) == 2, proc.stderr
    for line in errors:
        assert line == (
            "maxminq experiment: error: --algorithms: __main__:median_q is defined in this "
            "session (a notebook, an interactive Python, python -), which the --workers 2 "
            "worker processes cannot import; use --workers 1, or define median_q in a module "
            "of yours (e.g. my_ops.py on PYTHONPATH) and name it 'my_ops:median_q'"
        )
    assert not (tmp_path / "toy").exists() and not (tmp_path / "mc").exists()


def test_session_gs_in_a_class_partial_object_or_deleted_are_named_or_told_what_to_pass(
    tmp_path,
):
    """A staticmethod or classmethod of a class defined in the session ran as the string
    '__main__:Ops.med' but was refused as the function, with a message that a function of
    __main__ cannot be named (the docs say it runs); it now runs under that name. A
    functools.partial of a session's function, a callable object of the session: the
    message names what to pass (the function and op_kwargs; '__main__:name'), not
    'module:name'. A function whose name was deleted: said so, not 'a lambda, a closure'."""
    code = """
    import functools
    import numpy as np
    from maxminq.errors import UsageError
    from maxminq.tabular.toy_mdp import run_toy_mdp

    def median_q(q, w=1.0):
        return (w * np.median(q, axis=-2) + (1 - w) * q.mean(axis=-2)).max(axis=-1)

    class Ops:
        @staticmethod
        def med(q):
            return np.median(q, axis=-2).max(axis=-1)

        @classmethod
        def cmed(cls, q):
            return np.median(q, axis=-2).max(axis=-1)

    class MedianG:
        def __call__(self, q):
            return np.median(q, axis=-2).max(axis=-1)

    g_obj = MedianG()
    toy = dict(mu=-0.1, n=3, runs=2, episodes=4, seed=1)
    same = run_toy_mdp(algorithm="__main__:Ops.med", **toy)
    for g in (Ops.med, Ops.cmed):
        frame = run_toy_mdp(algorithm=g, **toy)
        numbers = frame.drop(columns="algorithm")
        print(frame["algorithm"].iloc[0], numbers.equals(same.drop(columns="algorithm")))

    def refused(g):
        try:
            run_toy_mdp(algorithm=g, **toy)
        except UsageError as err:
            print(err)

    refused(functools.partial(median_q, w=0.5))
    refused(g_obj)
    kept = median_q
    del median_q
    refused(kept)
    """
    out = stdin_session(code, tmp_path).stdout.splitlines()
    assert out == [
        "__main__:Ops.med True",
        "__main__:Ops.cmed True",
        "algorithm: a functools.partial cannot be named; pass algorithm=median_q, "
        "op_kwargs={'w': 0.5}",
        "algorithm: a callable MedianG object cannot be named from the object itself; pass "
        "algorithm='__main__:g_obj' (its name in this session)",
        "algorithm: G function 'median_q' is no longer defined in __main__ under that name "
        "(deleted, or the name holds something else now); define it again and pass it",
    ], out


def test_a_worker_without_the_sessions_g_says_why(tmp_path):
    """A worker process (a sweep's, run_sweep(..., workers=2) from a notebook) loading
    '__main__:median_q' failed with "module '__main__' has no 'median_q'", every run
    recorded so, while the user had just defined it: the message now says that a session's
    function is seen by its own process only, and what to do. In the session itself a
    missing name keeps the plain message."""
    code = """
    import multiprocessing, sys
    from concurrent.futures import ProcessPoolExecutor
    from maxminq.operators import load_operator

    def median_q(q):
        return q.max(axis=(-2, -1))

    del sys.modules["__main__"].__file__  # as in a notebook: the worker cannot run it again
    for where in ("session", "worker"):
        try:
            if where == "session":
                load_operator("__main__:median_qq")
            else:
                context = multiprocessing.get_context("spawn")
                with ProcessPoolExecutor(1, mp_context=context) as pool:
                    pool.submit(load_operator, "__main__:median_q").result()
        except ValueError as err:
            print(err)
    """
    out = stdin_session(code, tmp_path).stdout.splitlines()
    assert out == [
        "operator '__main__:median_qq': module '__main__' has no 'median_qq'",
        "operator '__main__:median_q': module '__main__' has no 'median_q' in this worker "
        "process: a function defined in a notebook or an interactive session is seen only by "
        "the process that defined it; define it in a module of yours (e.g. my_ops.py on "
        "PYTHONPATH) and name it 'my_ops:median_q'",
    ], out


def test_theory_command_called_in_a_notebook_shows_its_bar(tmp_path):
    """``maxminq.cli.main(["theory", ...])`` in a Jupyter kernel showed no bar through the
    Monte Carlo's wait (a bar only when stderr is a terminal, which a kernel's is not),
    while ``experiment``'s and the run functions' bars show there. The kernel is stood in
    for by an ``ipykernel`` entry in sys.modules (``maxminq._progress.in_notebook``'s test;
    tqdm.auto, finding no IPython, draws its text bar)."""
    code = """
    import sys, types
    from maxminq.cli import main

    sys.modules["ipykernel"] = types.ModuleType("ipykernel")
    argv = ["theory", "--m-max", "2", "--n-max", "2", "--samples", "10",
            "--variance-samples", "10", "--operator-m", "2", "--out", "kernel"]
    print("rc", main(argv), file=sys.stderr)
    """
    err = stdin_session(code, tmp_path).stderr
    assert err.rstrip().endswith("rc 0") and "Monte Carlo: 100%" in err, err
