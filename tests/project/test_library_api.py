"""maxminq as a library, used from a researcher's own code: what the packages show
(``dir``, type checkers), how the Python entry points refuse bad arguments (one line naming
the option, never a TypeError from deep inside), NumPy numbers where Python ones are
expected, and that training neither reads nor moves the global random state."""

from __future__ import annotations

import ast
import json
import random
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
from helpers import REPO
from sweep_kinds import same_tables

from maxminq.errors import UsageError

SRC = REPO / "src" / "maxminq"


# A run that trains in about a second: CartPole, 300 steps, learning from step 100.
TINY = dict(
    env_id="CartPole-v1",
    steps=300,
    learning_starts=100,
    eval_episodes=1,
    checkpoint_every=0,
    bias_every=100,
)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A finished two-seed DQN run on CartPole and its loaded agent."""
    from maxminq.deep import TrainConfig, load_agent, run_training

    out = tmp_path_factory.mktemp("lib") / "run"
    run_training(TrainConfig(**TINY, agent="dqn", seeds=[0, 1]), out, progress=False)
    return load_agent(out)


def _global_states() -> tuple:
    import torch

    legacy = np.random.get_state()[1].tolist()  # noqa: NPY002 - the global state is the subject
    return random.getstate(), legacy, torch.get_rng_state().tolist()


class _ThreadProbe(gym.Env):
    """A corridor that records torch's thread count at every step: what the policy's
    forward passes around it run with."""

    seen: list[int] = []

    def __init__(self) -> None:
        self.observation_space = gym.spaces.Box(0.0, 1.0, (4,), np.float32)
        self.action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(4, np.float32), {}

    def step(self, action):
        import torch

        _ThreadProbe.seen.append(torch.get_num_threads())
        self.t += 1
        return np.full(4, self.t / 10, np.float32), float(action), self.t >= 10, False, {}


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("lr", "3e-4", "--lr: expected a number, got '3e-4'"),  # was: 'must be real number'
        ("n", 2.5, "--n: expected a whole number, got 2.5"),  # was: zeros() takes 1 ...
        ("n", "4", "--n: expected a whole number, got '4'"),  # was: '<' not supported
        ("buffer_size", "100", "--buffer-size: expected a whole number, got '100'"),
        ("eps_start", "1", "--eps-start: expected a number, got '1'"),
        ("steps", 1500.5, "--steps: expected a whole number, got 1500.5"),  # trained 1,501
        ("steps", True, "--steps: expected a whole number, got True"),  # trained 1 step
        ("lr", True, "--lr: expected a number, got True"),  # trained at lr 1
        ("save_probes", "no", "--save-probes: expected True or False, got 'no'"),  # on
        ("timeout_as_terminal", "yes", "--timeout-as-terminal: expected True or False"),
        ("tensorboard", 1, "--tensorboard: expected True or False, got 1"),
        ("eval_eps", "0.1", "--eval-eps: expected a number, got '0.1'"),
        ("seeds", [True], "--seeds: expected a list of whole numbers, got [True]"),  # seed 1
    ],
)
def test_a_train_config_value_of_the_wrong_type_is_one_line_naming_it(field, value, message):
    from maxminq.deep import TrainConfig

    config = TrainConfig(**{**TINY, "agent": "maxmin-dqn", "n": 2, field: value})
    with pytest.raises(UsageError) as err:
        config.resolve()
    assert str(err.value).startswith(message)
    assert "\n" not in str(err.value)


def test_numpy_numbers_in_a_train_config_train_and_are_saved_as_python_numbers(tmp_path):
    """A sweep over np.arange / np.geomspace values: run_training raised 'Object of type
    int64 is not JSON serializable' after creating the run folder."""
    from maxminq.deep import TrainConfig, run_training

    config = TrainConfig(
        **{**TINY, "steps": np.int64(300), "learning_starts": np.int32(100)},
        agent="maxmin-dqn",
        n=np.int64(2),
        lr=np.float32(0.5),  # exactly representable: the same number as a Python float
        gamma=np.float64(0.9),
        seeds=np.arange(2),
    )
    resolved = config.resolve()
    assert (resolved.n, resolved.steps, resolved.lr, resolved.seeds) == (2, 300, 0.5, [0, 1])
    assert type(resolved.n) is int and type(resolved.steps) is int
    assert type(resolved.lr) is float and type(resolved.learning_starts) is int
    tables = run_training(config, tmp_path / "run", progress=False)
    saved = json.loads((tmp_path / "run" / "config.json").read_text())
    assert (saved["n"], saved["steps"], saved["lr"], saved["gamma"]) == (2, 300, 0.5, 0.9)
    assert sorted(tables["runs"]["seed"]) == [0, 1]


def test_numpy_numbers_inside_env_and_optimizer_keywords_are_python_numbers():
    """{"gravity": np.float32(-5)} was refused as 'values must be numbers', {"alpha":
    np.float32(0.5)} as 'alpha must be a number', betas=np.array(...) as 'not a pair'."""
    from maxminq.deep import TrainConfig

    env = TrainConfig(env_id="CartPole-v1", env_kwargs={"sutton_barto_reward": np.bool_(True)})
    assert env.resolve().env_kwargs == {"sutton_barto_reward": True}
    rms = TrainConfig(env_id="CartPole-v1", optimizer_kwargs={"alpha": np.float32(0.5)})
    assert rms.resolve().optimizer_kwargs == {"alpha": 0.5}
    betas = {"betas": np.array([0.5, 0.75])}
    adam = TrainConfig(env_id="CartPole-v1", optimizer="adam", optimizer_kwargs=betas)
    assert adam.resolve().optimizer_kwargs == {"betas": [0.5, 0.75]}
    assert json.dumps(env.resolve().to_dict())  # saved with the run


def test_a_whole_float_is_a_whole_number_as_in_a_sweep_config():
    from maxminq.deep import TrainConfig

    resolved = TrainConfig(**{**TINY, "steps": 3e2, "buffer_size": 1e3}).resolve()
    assert (resolved.steps, resolved.buffer_size) == (300, 1000)
    assert type(resolved.steps) is int and type(resolved.buffer_size) is int


@pytest.mark.parametrize("eps", [2.0, -1.0, float("nan"), True])
def test_act_refuses_an_eps_outside_0_1(trained, eps):
    """eps = 2 or NaN acted greedily without a word (and -1 too)."""
    obs = np.zeros(4, np.float32)
    with pytest.raises(ValueError, match=r"^act: eps must be a number in \[0, 1\]"):
        trained.act(obs, seed=0, eps=eps, rng=np.random.default_rng(0))


@pytest.mark.parametrize("rng", [None, 0, np.random.RandomState(0)])
def test_act_with_eps_needs_a_generator(trained, rng):
    """rng=0 or a legacy RandomState: 'int' object has no attribute 'random' from inside."""
    obs = np.zeros(4, np.float32)
    with pytest.raises(ValueError, match=r"^act: eps > 0 needs an np.random.Generator rng"):
        trained.act(obs, seed=0, eps=0.5, rng=rng)


def test_act_on_one_observation_and_on_a_batch_agree(trained):
    rng = np.random.default_rng(3)
    batch = rng.normal(size=(5, 4)).astype(np.float32)
    one_by_one = [trained.act(obs, seed=1) for obs in batch]
    assert trained.act(batch, seed=1).tolist() == one_by_one
    q = trained.q_values(batch, seed=1)
    assert q.shape == (5, 2) and one_by_one == q.argmax(axis=1).tolist()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"episodes": 0}, "--episodes: expected a whole number >= 1, got 0"),  # empty table
        ({"episodes": "3"}, "--episodes: expected a whole number >= 1, got '3'"),
        ({"eps": 2.0}, r"--eps: expected a probability in \[0, 1\], got 2.0"),
        ({"env_seed": -1}, "--env-seed: expected a whole number >= 0, got -1"),
        ({"seeds": 0}, "--seeds: expected a list of the run's seeds, got 0"),
        ({"seeds": []}, "--seeds: give at least one of the run's seeds"),  # empty table
    ],
)
def test_evaluate_agent_refuses_what_maxminq_evaluate_refuses(trained, kwargs, message):
    from maxminq.deep import evaluate_agent

    arguments = {"seeds": [0], "episodes": 1, **kwargs}
    with pytest.raises(UsageError, match="^" + message):
        evaluate_agent(trained, **arguments)


def test_evaluate_agent_takes_numpy_integers(trained):
    """Gymnasium's reset refused the NumPy env_seed ('Seed must be a python integer')."""
    from maxminq.deep import evaluate_agent

    as_numpy = evaluate_agent(trained, np.array([0, 1]), episodes=np.int64(2), env_seed=np.int64(5))
    plain = evaluate_agent(trained, [0, 1], episodes=2, env_seed=5)
    assert len(plain) == 4 and plain["seed"].tolist() == [0, 0, 1, 1]
    pd.testing.assert_frame_equal(as_numpy, plain)  # the seed column included


def test_a_run_neither_reads_nor_moves_the_global_random_state(tmp_path, trained):
    """The same config twice in one process, the global generators reseeded differently in
    between: bitwise the same tables and networks, and the generators a script relies on
    are where they were (evaluating a policy included)."""
    import torch

    from maxminq.deep import TrainConfig, evaluate_agent, run_training

    config = TrainConfig(**TINY, agent="maxmin-dqn", n=2, seeds=[0, 3], save_probes=True)
    tables = []
    for k, seed in enumerate([1, 12345]):
        random.seed(seed)
        np.random.seed(seed)  # noqa: NPY002 - what a script using the global state does
        torch.manual_seed(seed)
        before = _global_states()
        tables.append(run_training(config, tmp_path / f"run{k}", progress=False))
        evaluate_agent(trained, [0], episodes=1, eps=0.5)
        assert _global_states() == before
    assert sorted(tables[0]) == ["episodes", "metrics", "probes", "runs", "tests"]
    same_tables(*tables)  # bitwise, but for the wall-clock steps_per_s
    weights = [torch.load(tmp_path / f"run{k}" / "model.pt")["online"] for k in (0, 1)]
    assert torch.equal(*weights)


def test_dir_of_a_lazy_package_lists_its_api_without_importing_it():
    """dir(maxminq.deep) listed only 'lazy_attributes' (so did help() and tab completion)."""
    code = (
        "import sys, maxminq.deep as d, maxminq.analysis as a\n"
        "print([n for n in dir(d) if not n.startswith('_')])\n"
        "print([n for n in dir(a) if not n.startswith('_')])\n"
        "print('torch' in sys.modules, 'matplotlib' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    deep = ["TrainConfig", "TrainedAgent", "evaluate_agent", "load_agent", "pooled_bias"]
    assert eval(out[0]) == [*deep, "read_tables", "run_training"]
    assert eval(out[1]) == ["CompareWarning", "PlotWarning", "compare_runs", "plot_runs"]
    assert out[2] == "False False"  # dir() imports nothing


@pytest.mark.parametrize("package", ["deep", "analysis"])
def test_type_checkers_see_the_real_signatures_of_a_lazy_api(package):
    """mypy saw ``from maxminq.deep import TrainConfig`` as Any through the lazy
    ``__getattr__`` (``TrainConfig(n="two")`` passed --strict): every name of the package's
    ``_API`` must be imported under TYPE_CHECKING from its module, re-exported (``X as X``)."""
    tree = ast.parse((SRC / package / "__init__.py").read_text())
    api = next(
        ast.literal_eval(node.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "_API"
    )
    seen = {}
    for node in tree.body:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom)
                for alias in imp.names:
                    assert alias.asname == alias.name  # re-exported for mypy --strict
                    seen[alias.name] = imp.module
    assert seen == api


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ("compare_runs([])", "RUN_DIR: give at least one run folder"),  # was: '--baseline'
        ("plot_runs([], 'x.png')", "RUN_DIR: give at least one run folder"),  # 'no episode'
        ("compare_runs(['a', 'b'], baseline='2')", "--baseline: expected a position"),
        ("compare_runs(['a', 'b'], baseline=1.5)", "--baseline: expected a position"),
        ("compare_runs(['a'], seed='0')", "--seed: expected a whole number >= 0, got '0'"),
        ("compare_runs(['a'], seed=1.5)", "--seed: expected a whole number >= 0, got 1.5"),
    ],
)
def test_compare_and_plot_runs_refuse_bad_arguments_in_one_line(call, message):
    from maxminq.analysis import compare_runs, plot_runs

    names = {"compare_runs": compare_runs, "plot_runs": plot_runs}
    with pytest.raises(UsageError, match="^" + message):
        eval(call, names)


def test_an_environment_instance_or_spec_is_refused_naming_its_id():
    from maxminq.deep import TrainConfig
    from maxminq.envs import make

    env = gym.make("CartPole-v1")
    for given in (env, gym.spec("CartPole-v1")):
        with pytest.raises(UsageError, match=r"^--env: expected an environment id .*'CartPole-v1'"):
            make(given)
    with pytest.raises(UsageError, match="give its id, 'CartPole-v1'"):
        TrainConfig(env_id=env).resolve()  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="the class CartPoleEnv; .* give its id, 'CartPole-v1'$"):
        make(type(env.unwrapped))
    env.close()


@pytest.mark.parametrize("env_id", ["CartPole-v1", "maxminq/Catcher-v0"])
def test_make_vector_refuses_a_single_seed_keyword(env_id):
    """make's seed= given to make_vector: 'functools.partial() got multiple values for
    keyword argument' (CartPole) or 'GameVectorEnv.__init__() got an unexpected keyword'."""
    from maxminq.envs import make_vector

    with pytest.raises(UsageError, match=r"^seed: make_vector takes one seed per sub-env"):
        make_vector(env_id, [0, 1], seed=3)


def test_an_id_with_an_empty_module_part_is_named_as_such():
    """':CartPole-v1' passed the id check, then gym.make's 'Empty module name' came out of
    run_training as 'cannot be built without keywords; pass them with --env-kwargs'."""
    from maxminq.deep import TrainConfig
    from maxminq.envs import make

    message = r"^--env: ':CartPole-v1' has nothing before its ':'; give the id alone"
    with pytest.raises(UsageError, match=message):
        make(":CartPole-v1")
    with pytest.raises(UsageError, match=message):
        TrainConfig(env_id=":CartPole-v1").resolve()


def test_a_policy_plays_on_one_torch_thread_and_restores_the_callers(tmp_path):
    """With torch's default (one thread per core) one action of LunarLander's Maxmin N = 3
    took 4-23 ms instead of 0.1 ms on this 2-core machine under load, and evaluate_agent's
    2 episodes 0.6-5 s instead of 0.14 s: the small networks have nothing to split among
    threads, which then wait for each other."""
    import torch

    from maxminq.deep import TrainConfig, evaluate_agent, load_agent, run_training

    if "ThreadProbe-v0" not in gym.registry:
        gym.register("ThreadProbe-v0", entry_point=_ThreadProbe, max_episode_steps=20)
    config = TrainConfig(**{**TINY, "env_id": "ThreadProbe-v0"}, agent="dqn")
    run_training(config, tmp_path / "run", progress=False)
    agent = load_agent(tmp_path / "run")
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        _ThreadProbe.seen.clear()
        evaluate_agent(agent, [0], episodes=2)
        assert _ThreadProbe.seen == [1] * 20  # every step of both episodes
        assert torch.get_num_threads() == 2
        agent.q_values(np.zeros((3, 4), np.float32), seed=0)
        assert torch.get_num_threads() == 2
        with pytest.raises(UsageError):  # an error inside leaves it restored too
            agent.q_values(np.zeros(4, np.float32), seed=7)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(threads)


def test_run_training_refuses_a_dict_and_a_file_as_folder(tmp_path) -> None:
    # A dict of options was an AttributeError ('dict' object has no attribute 'resolve') and
    # an existing file as out_dir a raw FileExistsError; both are one-line UsageErrors now.
    from maxminq.deep import TrainConfig, run_training
    from maxminq.errors import UsageError

    with pytest.raises(UsageError, match=r"^config: expected a maxminq.deep.TrainConfig, got dict"):
        run_training({"env_id": "CartPole-v1"}, tmp_path / "a", progress=False)  # type: ignore[arg-type]
    afile = tmp_path / "afile"
    afile.write_text("notes")
    config = TrainConfig(env_id="CartPole-v1", agent="dqn", steps=50, seeds=[0])
    with pytest.raises(UsageError, match=r"^--out: .*afile exists and is not a folder$"):
        run_training(config, str(afile), progress=False)
    assert afile.read_text() == "notes" and not (tmp_path / "a").exists()


def test_drawing_figures_leaves_the_users_matplotlib_session_alone(tmp_path) -> None:
    # Importing the figure modules switched the backend to Agg (a notebook's inline backend
    # too), and the report's error path closed every open pyplot figure; figures are now
    # built without pyplot. In a fresh interpreter, so that this process's backend is moot.
    code = f"""
import matplotlib
matplotlib.use("svg")
import matplotlib.pyplot as plt
mine = plt.figure()
import pandas as pd
from maxminq.analysis import classic_plots, figures
from maxminq.analysis.runs import plot_runs
paths = plot_runs([{str(SRC.parents[1] / "docs/runs/catcher/dqn")!r}], {str(tmp_path / "curves")!r})
table = pd.DataFrame({{"mu": [0.1, 0.1], "algorithm": ["maxmin", "maxmin"], "n": [2, 2],
                      "run": [0, 0], "episode": [0, 1], "p_left": [0.5, 0.9],
                      "distance": [0.4, 0.1], "q_a_left": [0.0, 0.1]}})
classic_plots.save_figure(classic_plots.toy_distance_figure(table), {str(tmp_path / "toy.png")!r})
assert matplotlib.get_backend() == "svg", matplotlib.get_backend()
assert plt.get_fignums() == [mine.number], plt.get_fignums()
print(len(paths))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "2" and (tmp_path / "toy.png").stat().st_size > 1000
