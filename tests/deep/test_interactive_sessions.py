"""The Python API driven as a researcher drives it from a notebook or an interactive session
(session 23): code fed on stdin (``python -``, so its classes and functions live in
``__main__`` with no file), output not a terminal, a call re-run in the same process, a
kernel interrupt (a KeyboardInterrupt) in the middle of a call."""

from __future__ import annotations

import os

from helpers import stdin_session

# An environment of the session's own whose step raises KeyboardInterrupt at a chosen call,
# as a kernel interrupt lands in the middle of run_training.
_INTERRUPTING_ENV = """
    import sys, threading, warnings
    import gymnasium as gym
    from line_env import LineEnv

    warnings.simplefilter("ignore")

    class Interrupting(LineEnv):
        calls, at = 0, None

        def step(self, action):
            type(self).calls += 1
            if type(self).calls == type(self).at:
                raise KeyboardInterrupt
            return super().step(action)

    gym.register("Interrupting-v0", entry_point=Interrupting, max_episode_steps=50)

    from tqdm import tqdm
    from maxminq.deep import TrainConfig, run_training

    def threads():
        return sorted(t.name for t in threading.enumerate())

    cfg = TrainConfig(env_id="Interrupting-v0", agent="dqn", steps=150, seeds=[0],
                      learning_starts=20, batch_size=8, buffer_size=200, eval_episodes=1,
                      checkpoint_every=40)
"""


def test_a_kernel_interrupt_leaves_nothing_behind_and_the_sessions_state_as_it_was(tmp_path):
    """A KeyboardInterrupt in the middle of run_training left its progress bar open (the
    exception a session keeps, ``sys.last_value``, holds the frame): the next call's bar
    went to a second line (cursor-up escapes in the output) and the old one was drawn again
    at exit. And every run, ``progress=False`` too, left tqdm's monitor thread running for
    the rest of the session. And the traceback ended in a bare "KeyboardInterrupt". Now:
    no bar left, no thread, the interrupt says where the run can continue, and the next
    call resumes it from there.

    Then the rest of a session's calls (evaluating, plotting and comparing runs, the
    classic run functions, the theory): snapshots before and after of what a notebook user
    notices when a call changes it for the whole process: torch's thread count, the signal
    handlers and mask, warning filters, NumPy's print options and error handling,
    environment variables, sys.path, matplotlib's backend and rcParams, the working folder,
    the global random generators and the threads running."""
    code = (
        _INTERRUPTING_ENV
        + """
    import os, random, signal
    import matplotlib, numpy as np, torch
    import maxminq.analysis.theory_plots as theory_plots, maxminq.theory
    from maxminq.analysis import compare_runs, plot_runs
    from maxminq.deep import evaluate_agent, load_agent
    from maxminq.linear.mountain_car import run_mountain_car
    from maxminq.tabular.toy_mdp import run_toy_mdp
    # SciPy adds warning filters of its own when first imported (by a call below, lazily):
    # its doing, once per process, not the calls'
    import scipy.integrate, scipy.optimize, scipy.sparse, scipy.stats

    def snapshot():
        return {
            "torch threads": torch.get_num_threads(),
            "signals": [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)],
            "signal mask": signal.pthread_sigmask(signal.SIG_BLOCK, []),
            "warning filters": list(warnings.filters),
            "numpy": (np.get_printoptions(), np.geterr()),
            "environment": dict(os.environ),
            "sys.path": list(sys.path),
            "matplotlib": (matplotlib.get_backend(), dict(matplotlib.rcParams)),
            "cwd": os.getcwd(),
            "random": (random.getstate(), np.random.get_state()[1].tolist(),
                       torch.random.get_rng_state().tolist()),
            "threads": threads(),
        }

    before = snapshot()
    run_training(cfg, "quiet", progress=False)
    print("after a quiet run:", threads())
    Interrupting.calls, Interrupting.at = 0, 100
    try:
        run_training(cfg, "run")
    except KeyboardInterrupt as err:
        sys.last_value = err  # as an interactive session keeps it
        print("interrupted, checkpoint:", err.checkpoint_step)
        print(err)  # the last line of the traceback a notebook shows
    print("after the interrupt:", threads(), "open bars:", len(tqdm._instances))
    sys.stderr.write("@@@")
    Interrupting.at = None
    tables = run_training(cfg, "run")
    sys.stderr.write("@@@")
    print("resumed:", tables["runs"]["status"].tolist(), len(tables["episodes"]))
    print("at the end:", threads())

    evaluate_agent(load_agent("run"), [0], 2, progress=True)
    plot_runs(["run"])
    compare_runs(["run"])
    run_toy_mdp(mu=-0.1, algorithm="maxmin", n=2, runs=2, episodes=2, seed=0, progress=True)
    run_mountain_car(algorithm="ensemble", n=2, sigma2=1.0, step_size=0.1, runs=1, episodes=1,
                     seed=0, max_steps=20, progress=True)
    theory_plots.plot_operator_bias(theory_plots.operator_bias_table(2, 2, 20, 0))
    maxminq.theory.operator_bias("maxmin", 2, 2, 1.0, 1.0, 20, np.random.default_rng(0))
    after = snapshot()
    print("changed:", [key for key in before if before[key] != after[key]])
    """
    )
    proc = stdin_session(code, tmp_path)
    out = proc.stdout.splitlines()
    assert out[0] == "after a quiet run: ['MainThread']", proc.stdout
    step = int(out[1].removeprefix("interrupted, checkpoint: "))
    assert step in (40, 80), proc.stdout
    assert out[2] == (  # was empty: a bare "KeyboardInterrupt"
        f"run_training stopped; run{os.sep}checkpoint holds the checkpoint of step {step} "
        "(of 150): the same run_training (config and folder) continues from it"
    )
    assert out[3] == "after the interrupt: ['MainThread'] open bars: 0", proc.stdout
    assert out[4].startswith("resumed: ['done'] "), proc.stdout
    assert out[5] == "at the end: ['MainThread']", proc.stdout
    assert out[6] == "changed: []", proc.stdout
    second = proc.stderr.split("@@@")[1]
    assert "\x1b[A" not in second, second  # the bar of the next call on its own line
    assert f"{step}/150" in second  # it started from the checkpoint
    assert "150/150" in second


def test_bars_written_to_a_file_redraw_rarely_not_ten_times_a_second(tmp_path):
    """With stderr a file or a pipe (a log, ``python - <<EOF`` captured), tqdm redrew each bar
    every 0.1 s: a run of an hour left some 36,000 carriage-return updates in its log. Now
    at most every minute, and the end. Time is tqdm's clock, here one second per reading."""
    code = """
    import itertools, warnings
    import tqdm.std
    warnings.simplefilter("ignore")
    clock = itertools.count(0.0, 1.0)
    tqdm.std.time = lambda: next(clock)  # tqdm's clock: a second passes at every reading

    import sys
    from maxminq.tabular.toy_mdp import run_toy_mdp
    run_toy_mdp(mu=-0.1, algorithm="maxmin", n=2, runs=60, episodes=2, seed=0, progress=True)
    sys.stderr.write("@@@")

    import gymnasium as gym
    from line_env import LineEnv
    gym.register("Line-v0", entry_point=LineEnv, max_episode_steps=50)
    from maxminq.deep import TrainConfig, run_training
    cfg = TrainConfig(env_id="Line-v0", agent="dqn", steps=150, seeds=[0], learning_starts=20,
                      batch_size=8, buffer_size=200, eval_episodes=1, checkpoint_every=0)
    run_training(cfg, "run")
    """
    proc = stdin_session(code, tmp_path)
    toy, deep = proc.stderr.split("@@@")
    toy_draws = [s for s in toy.splitlines() if "toy maxmin" in s]  # \r or \n
    assert 2 <= len(toy_draws) <= 4, toy_draws  # was 61: one per lane
    assert "120/120" in toy_draws[-1]
    deep_draws = [s for s in deep.splitlines() if "dqn Line-v0" in s]
    assert 2 <= len(deep_draws) <= 5, deep_draws  # was 151: one per step
    assert "150/150" in deep_draws[-1]


# A Jupyter kernel as tqdm.auto sees one: ipykernel loaded, get_ipython() a ZMQ shell, and
# ipywidgets' progress widgets (recorded here instead of drawn).
_FAKE_NOTEBOOK = """
    import sys, types

    class Widget:
        made = []

        def __init__(self, *args, **kwargs):
            self.layout = types.SimpleNamespace()
            self.style = types.SimpleNamespace()
            self.value, self.max, self.children, self.bar_style = 0, None, [], ""
            for key, value in kwargs.items():
                setattr(self, key, value)
            Widget.made.append(self)

    class FloatProgress(Widget):
        pass

    ipywidgets = types.ModuleType("ipywidgets")
    ipywidgets.FloatProgress, ipywidgets.HTML, ipywidgets.HBox = FloatProgress, Widget, Widget
    sys.modules["ipywidgets"] = ipywidgets

    class ZMQInteractiveShell:
        pass

    ipython = types.ModuleType("IPython")
    ipython.get_ipython = ZMQInteractiveShell
    display = types.ModuleType("IPython.display")
    display.display = lambda *objects: None
    ipython.display = display
    sys.modules.update({"IPython": ipython, "IPython.display": display})
    for name in ("ipykernel", "ipykernel.zmqshell"):
        sys.modules[name] = types.ModuleType(name)

    def bars():
        return [(w.max, w.value) for w in Widget.made if isinstance(w, FloatProgress)]
"""


def test_in_a_notebook_the_bars_are_widgets_not_text_in_the_cell(tmp_path):
    """run_training and evaluate_agent drew text bars (``from tqdm import tqdm``) into a
    notebook cell's output, where the classic experiments drew widgets (``tqdm.auto``).
    All draw tqdm.auto's bars now: widgets in a notebook, nothing written as text."""
    code = (
        _FAKE_NOTEBOOK
        + """
    import warnings
    warnings.simplefilter("ignore")
    import gymnasium as gym
    from line_env import LineEnv
    gym.register("Line-v0", entry_point=LineEnv, max_episode_steps=50)
    from maxminq.deep import TrainConfig, run_training, load_agent, evaluate_agent
    cfg = TrainConfig(env_id="Line-v0", agent="dqn", steps=150, seeds=[0], learning_starts=20,
                      batch_size=8, buffer_size=200, eval_episodes=2, checkpoint_every=0)
    run_training(cfg, "run")
    evaluate_agent(load_agent("run"), seeds=[0], episodes=3, progress=True)
    from maxminq.tabular.toy_mdp import run_toy_mdp
    run_toy_mdp(mu=-0.1, algorithm="maxmin", n=2, runs=2, episodes=2, seed=0, progress=True)
    print(bars())
    """
    )
    proc = stdin_session(code, tmp_path)
    assert proc.stdout.strip() == "[(150, 150), (2, 2), (3, 3), (4, 4)]", proc.stdout
    assert "step/s" not in proc.stderr and "ep/s" not in proc.stderr, proc.stderr[-2000:]


def test_a_train_config_shows_the_options_given_in_one_line():
    """A notebook shows a TrainConfig by its repr: the dataclass's listed all 37 fields, 27
    of them None. Now the fields given (not at their defaults), which Python reads back as
    the same config; a resolved one shows the defaults it filled in."""
    import numpy as np

    from maxminq.deep import TrainConfig

    config = TrainConfig(env_id="CartPole-v1", agent="dqn", steps=20_000, seeds=[0, 1])
    text = repr(config)
    assert text == "TrainConfig(env_id='CartPole-v1', agent='dqn', steps=20000, seeds=[0, 1])"
    assert eval(text, {"TrainConfig": TrainConfig}) == config
    assert repr(TrainConfig(env_id="CartPole-v1")) == "TrainConfig(env_id='CartPole-v1')"
    # given as a NumPy array (no single truth value to compare with the default): shown,
    # as the list resolve() makes of it (array([0, 1, 2]) did not read back)
    assert "seeds=[0, 1, 2]" in repr(TrainConfig(env_id="X", seeds=np.arange(3)))
    resolved = repr(config.resolve())
    assert "gamma=0.99" in resolved and "optimizer='rmsprop'" in resolved
    assert "None" not in resolved.replace("operator=None", "")


def test_evaluate_agent_plays_every_finished_seed_by_default(tmp_path):
    """``evaluate_agent(agent)`` was a TypeError (seeds and episodes required), where
    ``maxminq evaluate RUN_DIR`` plays every seed that finished training, 10 episodes each:
    the same defaults now."""
    import pandas as pd

    from maxminq.deep import TrainConfig, evaluate_agent, load_agent, run_training

    config = TrainConfig(env_id="CartPole-v1", agent="dqn", steps=60, seeds=[0, 2],
                         learning_starts=20, batch_size=8, buffer_size=100, eval_episodes=1,
                         checkpoint_every=0)  # fmt: skip
    run_training(config, tmp_path / "run", progress=False)
    agent = load_agent(tmp_path / "run")
    played = evaluate_agent(agent)
    assert played["seed"].tolist() == [0] * 10 + [2] * 10
    pd.testing.assert_frame_equal(played, evaluate_agent(agent, [0, 2], 10))
