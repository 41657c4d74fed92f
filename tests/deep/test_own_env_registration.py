"""A researcher's own Gymnasium environment named on the command line: ``maxminq envs --env``
refuses what ``maxminq train`` then refuses (channels-last images, MultiDiscrete or shifted
Discrete actions) with train's hint, ``--env module:function`` and ``--env module:Name-v0``
for an entry point the module never registered, ids without their namespace; and, on runs
of such an environment, ``maxminq status`` on a run still training or stopped, ``maxminq
compare`` on runs without a bias, scripts that train on their own id."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
import warnings

import pytest
from user_modules import user_module

from maxminq.cli import main
from maxminq.deep.bias_probes import CutEpisodesWarning
from maxminq.deep.config import TrainConfig
from maxminq.deep.run_folder import TABLE_COLUMNS, folder_lock
from maxminq.deep.train import run_training

MODULE = "j22_own_envs"


SOURCE = textwrap.dedent(
    """
    import gymnasium as gym
    import numpy as np


    class J22Line(gym.Env):
        observation_space = gym.spaces.Box(0.0, 1.0, (4,), np.float32)
        action_space = gym.spaces.Discrete(2)

        def reset(self, *, seed=None, options=None):
            super().reset(seed=seed)
            self.pos = 0
            return self._obs(), {}

        def _obs(self):
            return np.eye(4, dtype=np.float32)[self.pos]

        def step(self, action):
            self.pos = min(3, max(0, self.pos + (1 if int(np.ravel(action)[0]) == 1 else -1)))
            return self._obs(), float(self.pos == 3), self.pos == 3, False, {}


    class J22Pixels(J22Line):  # uint8 (H, W, C): channels last, as cameras give them
        observation_space = gym.spaces.Box(0, 255, (8, 8, 3), np.uint8)

        def _obs(self):
            frame = np.zeros((8, 8, 3), np.uint8)
            frame[self.pos] = 255
            return frame


    class J22Pair(J22Line):
        action_space = gym.spaces.MultiDiscrete([2, 3])


    class J22FromOne(J22Line):
        action_space = gym.spaces.Discrete(2, start=1)


    class J22NeverRegistered(J22Line):
        pass


    def make_line(**kwargs):  # an entry point that is a function, registered below
        return J22Line(**kwargs)


    def make_unregistered(**kwargs):  # one that is not
        return J22Line(**kwargs)


    gym.register("J22Pixels-v0", entry_point=J22Pixels, max_episode_steps=20)
    gym.register("J22Pair-v0", entry_point=J22Pair, max_episode_steps=20)
    gym.register("J22FromOne-v0", entry_point=J22FromOne, max_episode_steps=20)
    gym.register("J22Line-v0", entry_point=make_line, max_episode_steps=20)
    gym.register("j22lab/J22Walk-v0", entry_point=J22Line, max_episode_steps=20)
    """
)


@pytest.fixture(scope="module")
def own_module(tmp_path_factory):
    """The user's module, importable as ``j22_own_envs``."""
    with user_module(tmp_path_factory.mktemp("own_envs"), MODULE, SOURCE) as name:
        yield importlib.import_module(name)


def _error(capsys, argv: list[str]) -> str:
    """The one stderr line of a command that must fail with exit status 2."""
    assert main(argv) == 2
    out = capsys.readouterr()
    assert out.out == ""
    lines = out.err.splitlines()
    assert len(lines) == 1, lines
    return lines[0]


@pytest.fixture(scope="module")
def stopped_run(own_module, tmp_path_factory):
    """A run stopped after 40 of 200 steps, as a kill leaves it (a checkpoint, progress)."""
    out = tmp_path_factory.mktemp("runs") / "line"
    config = TrainConfig(
        env_id=f"{MODULE}:J22Line-v0",
        agent="dqn",
        steps=200,
        seeds=[0],
        learning_starts=20,
        buffer_size=100,
        batch_size=8,
        eval_episodes=1,
        checkpoint_every=40,
    )
    assert run_training(config, out, progress=False, stop_after=40) == {}
    return out


def test_envs_refuses_channels_last_images_with_trains_hint(own_module, capsys) -> None:
    """It listed '--network minatar_cnn' as what train would use for (8, 8, 3) images,
    and train then refused them."""
    env = f"{MODULE}:J22Pixels-v0"
    line = _error(capsys, ["envs", "--env", env])
    assert line.startswith(f"maxminq envs: error: --env: 'maxminq train --env {env}' refuses it")
    assert "(8, 8, 3) (channels last? move them first: (3, 8, 8)" in line
    # the same reason as train gives
    train = _error(capsys, ["train", "--env", env, "--steps", "50", "--out", "unused"])
    assert train.split("needs ")[1] == line.split("needs ")[1]


def test_envs_multidiscrete_says_to_number_the_combinations(own_module, capsys) -> None:
    """Its hint was 'e.g. gymnasium.wrappers.DiscretizeAction for a Box', for a space
    that is no Box."""
    line = _error(capsys, ["envs", "--env", f"{MODULE}:J22Pair-v0"])
    assert "MultiDiscrete([2 3])" in line
    assert line.endswith(
        "give the environment one Discrete(n) action that numbers the combinations (n = 6, "
        "the product of its nvec)"
    )
    assert "DiscretizeAction" not in line


def test_envs_refuses_actions_that_do_not_start_at_zero(own_module, capsys) -> None:
    """Discrete(2, start=1) was listed; train refuses it (the agents act with 0..n-1)."""
    line = _error(capsys, ["envs", "--env", f"{MODULE}:J22FromOne-v0"])
    assert "start at 1" in line
    assert "TransformAction(env, lambda a: a + 1, gymnasium.spaces.Discrete(2))" in line


def test_envs_still_lists_an_environment_train_takes(own_module, capsys) -> None:
    assert main(["envs", "--env", f"{MODULE}:J22Line-v0"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{MODULE}:J22Line-v0: not a paper environment")
    assert "  --network            mlp\n" in out


def test_a_function_entry_point_is_told_how_to_register_it(own_module, capsys) -> None:
    """'--env j22_own_envs:make_unregistered' (a function that makes the environment) was
    'unknown environment ... expected one of maxminq/Catcher-v0, ...'; a class already got
    the gymnasium.register line."""
    line = _error(capsys, ["envs", "--env", f"{MODULE}:make_unregistered"])
    assert line == (
        f"maxminq envs: error: --env: make_unregistered is a function in '{MODULE}', not a "
        f"registered id; register it in that module with gymnasium.register("
        f"id='make_unregistered-v0', entry_point='{MODULE}:make_unregistered') and give "
        f"--env {MODULE}:make_unregistered-v0"
    )


def test_a_registered_function_entry_point_names_its_id(own_module, capsys) -> None:
    line = _error(capsys, ["envs", "--env", f"{MODULE}:make_line"])
    assert line.endswith(
        f"make_line is a function in '{MODULE}', not an id; it is registered as "
        f"'J22Line-v0': give --env {MODULE}:J22Line-v0"
    )


def test_name_v0_of_an_entry_point_never_registered_says_to_register_it(own_module, capsys) -> None:
    """'--env j22_own_envs:J22NeverRegistered-v0' (the module defines the class but forgot
    gymnasium.register) listed every paper id, not the line that registers it."""
    line = _error(capsys, ["envs", "--env", f"{MODULE}:J22NeverRegistered-v0"])
    assert line.endswith(
        f"(importing '{MODULE}' did not register it); it defines J22NeverRegistered: register "
        f"it there with gymnasium.register(id='J22NeverRegistered-v0', "
        f"entry_point='{MODULE}:J22NeverRegistered')"
    )
    assert "maxminq/Catcher-v0" not in line


def test_another_version_of_a_registered_class_is_not_told_to_register_it(
    own_module, capsys
) -> None:
    """The register hint above is for an entry point never registered: J22Pair is
    registered as J22Pair-v0, so J22Pair-v1 is a typo of that id."""
    line = _error(capsys, ["envs", "--env", f"{MODULE}:J22Pair-v1"])
    assert line.endswith(
        f"did you mean {MODULE}:J22Pair-v0? ('maxminq envs' lists the paper's ids)"
    )


def test_an_id_without_its_namespace_is_pointed_to_it(own_module, capsys) -> None:
    """gymnasium.register(id='j22lab/J22Walk-v0') registers the id with its namespace;
    '--env j22_own_envs:J22Walk-v0' listed every paper id instead of naming it."""
    line = _error(capsys, ["envs", "--env", f"{MODULE}:J22Walk-v0"])
    assert line.endswith(
        f"did you mean {MODULE}:j22lab/J22Walk-v0? ('maxminq envs' lists the paper's ids)"
    )


def test_status_on_a_stopped_train_run_says_how_far_and_how_to_continue(
    stopped_run, capsys
) -> None:
    """It said 'no results.sqlite here; is this a sweep output folder?'."""
    assert json.loads((stopped_run / "progress.json").read_text())["step"] == 40
    line = _error(capsys, ["status", str(stopped_run)])
    assert line == (
        f"maxminq status: error: DIR: {stopped_run} is the folder of one 'maxminq train' run, "
        "no sweep: it is not training (stopped or killed, last at step 40 of 200 (20%)); the "
        "same 'maxminq train' command with --resume continues it from its checkpoint; "
        f"'maxminq plot {stopped_run}' and 'maxminq compare {stopped_run}' read it once it "
        "has finished (status reads the --out of a sweep)"
    )


def test_status_on_a_train_run_in_progress_says_it_is_training(stopped_run, capsys) -> None:
    with folder_lock(stopped_run):  # what a live 'maxminq train' holds on its folder
        line = _error(capsys, ["status", str(stopped_run)])
    assert "it is training now, at step 40 of 200 (20%);" in line
    assert "--resume" not in line
    # the probe released its lock: a run can train there again
    fd = os.open(stopped_run, os.O_RDONLY)
    try:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(fd)


def test_compare_says_why_a_run_has_no_bias(own_module, tmp_path, capsys) -> None:
    """A run without a bias measured in its second half showed 'n/a' in the bias column,
    and with no run measured the column was left out, neither with a word on why: here one
    run never passed --learning-starts (where probing starts), and a run of 80 steps at the
    default --bias-every (1,000) has no metrics interval that starts in its second half."""
    base = dict(
        env_id=f"{MODULE}:J22Line-v0",
        steps=80,
        seeds=[0, 1],
        buffer_size=100,
        batch_size=8,
        eval_episodes=2,
        checkpoint_every=0,
    )
    runs = {
        "unprobed": TrainConfig(agent="maxmin-dqn", n=2, learning_starts=80, **base),
        "probed": TrainConfig(agent="dqn", learning_starts=10, bias_every=20, **base),
        "short": TrainConfig(agent="ddqn", learning_starts=10, **base),  # bias_every 1,000
    }
    with warnings.catch_warnings():  # the cap of 20 cuts episodes: not what is tested
        warnings.simplefilter("ignore", CutEpisodesWarning)
        for name, config in runs.items():
            run_training(config, tmp_path / name, progress=False)
    capsys.readouterr()

    def compare(*names: str) -> list[str]:
        assert main(["compare", *(str(tmp_path / n) for n in names)]) == 0
        return capsys.readouterr().out.splitlines()

    rows = compare("probed", "unprobed", "short")
    assert "bias +- SE" in rows[1]
    assert all(
        "n/a" in next(r for r in rows if r.startswith(f"{label}  "))
        for label in ("Maxmin DQN (N=2)", "Double DQN")
    )
    assert "n/a" not in next(r for r in rows if r.startswith("DQN  ")).split("test")[1][:40]
    footer = " ".join(r.strip() for r in rows)
    assert (
        "bias: none measured in the second half of training of Maxmin DQN (N=2): its 80 steps "
        "never passed --learning-starts, where probing starts; of Double DQN: no metrics "
        "interval (--bias-every 1,000) starts in the second half of its 80 steps; a smaller "
        "--bias-every gives some"
    ) in footer
    rows = compare("unprobed")
    assert "bias +- SE" not in rows[1]  # no run measured one: no column
    assert (
        "bias: none measured in the second half of training: its 80 steps never passed "
        "--learning-starts, where probing starts"
    ) in " ".join(r.strip() for r in rows)
    assert not any("none measured" in r for r in compare("probed"))


def test_a_script_training_on_its_own_id_gets_no_gymnasium_override_warning(tmp_path) -> None:
    """A script that defines and registers its environment, then trains on
    'j22_script:J22Walk-v0' (the id another process can rebuild, as the docs advise), is
    imported again under its name; its gymnasium.register ran twice and Gymnasium warned
    'Overriding environment J22Walk-v0 already in registry', about the same code."""
    script = tmp_path / "j22_script.py"
    script.write_text(
        textwrap.dedent(
            """
            import gymnasium as gym
            import numpy as np


            class J22Walk(gym.Env):
                observation_space = gym.spaces.Box(0.0, 1.0, (2,), np.float32)
                action_space = gym.spaces.Discrete(2)

                def reset(self, *, seed=None, options=None):
                    super().reset(seed=seed)
                    return np.zeros(2, np.float32), {}

                def step(self, action):
                    return np.zeros(2, np.float32), 1.0, True, False, {}


            gym.register("J22Walk-v0", entry_point=J22Walk, max_episode_steps=5)

            if __name__ == "__main__":
                import sys
                import warnings

                from maxminq.envs import make

                warnings.simplefilter("always")
                env = make("j22_script:J22Walk-v0", seed=0)
                env.reset()
                # imported again under its name: the registry's entry point is that module's
                print(gym.spec("J22Walk-v0").entry_point.__module__, "j22_script" in sys.modules)
            """
        )
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path, check=True
    )
    assert done.stdout.split() == ["j22_script", "True"]
    assert "Overriding environment" not in done.stderr, done.stderr


def test_a_script_that_trains_unguarded_is_told_to_guard_it(tmp_path) -> None:
    """The same script without 'if __name__ == "__main__":' ran its top level (its
    training) a second time, nested inside maxminq's import of it, silently."""
    script = tmp_path / "j22_unguarded.py"
    script.write_text(
        textwrap.dedent(
            """
            import gymnasium as gym
            import numpy as np

            from maxminq.envs import make

            print("top level runs as", __name__)


            class J22Still(gym.Env):
                observation_space = gym.spaces.Box(0.0, 1.0, (2,), np.float32)
                action_space = gym.spaces.Discrete(2)

                def reset(self, *, seed=None, options=None):
                    super().reset(seed=seed)
                    return np.zeros(2, np.float32), {}

                def step(self, action):
                    return np.zeros(2, np.float32), 1.0, True, False, {}


            gym.register("J22Still-v0", entry_point=J22Still, max_episode_steps=5)
            make("j22_unguarded:J22Still-v0", seed=0)  # as run_training's first step does
            print("made in", __name__)
            """
        )
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path
    )
    assert done.returncode == 1
    assert "made in" not in done.stdout  # neither the nested nor the script's own use ran on
    assert done.stderr.rstrip().splitlines()[-1] == (
        "maxminq.errors.UsageError: --env: importing module 'j22_unguarded' of "
        "'j22_unguarded:J22Still-v0', the script that runs, ran its top-level code again, "
        "which uses 'j22_unguarded:J22Still-v0' itself (trains on it, say) and would do so a "
        "second time: put that code under if __name__ == '__main__': so that importing the "
        "script only registers the environment"
    )


def test_status_on_a_run_stopped_before_its_first_progress_says_so(stopped_run, tmp_path, capsys):
    """Stopped in its first steps (config.json only: no checkpoint, no progress.json yet)."""
    early = tmp_path / "early"
    early.mkdir()
    (early / "config.json").write_text((stopped_run / "config.json").read_text())
    line = _error(capsys, ["status", str(early)])
    assert line.endswith(
        "it is not training (stopped or killed, early, before its first progress.json); the "
        "same 'maxminq train' command with --resume trains it (it has no checkpoint to "
        "continue from); "
        f"'maxminq plot {early}' and 'maxminq compare {early}' read it once it has finished "
        "(status reads the --out of a sweep)"
    )


def test_compare_of_other_env_kwargs_says_none_and_what_to_do(tmp_path, capsys) -> None:
    """'--env-kwargs {"n": 6}' (the constructor's default) against a run without: the line
    read 'with env_kwargs {"n": 6}, runs/b with {}' and left the user to guess why the same
    environment was 'different'."""
    runs = []
    for name, kwargs in (("with", {"n": 6}), ("without", None)):
        folder = tmp_path / name
        folder.mkdir()
        cfg = {"env_id": "my_pkg:Chain-v0", "agent": "dqn", "n": 1, "lr": 1e-3, "steps": 10}
        (folder / "config.json").write_text(json.dumps(cfg | {"seeds": [0], "env_kwargs": kwargs}))
        values = {"seed": 0, "status": "done", "diverged_step": -1, "episode": 1, "step": 5}
        values |= {"return": 1.0, "length": 5, "return_avg100": 1.0, "terminated": True}
        values["truncated"] = False
        for table in ("episodes", "tests", "metrics", "runs"):  # one seed, never scored here
            columns = TABLE_COLUMNS[table]
            row = ",".join(str(values.get(c, "")) for c in columns)
            lines = [",".join(columns), *([row] if table in ("episodes", "runs") else [])]
            (folder / f"{table}.csv").write_text("\n".join(lines) + "\n")
        runs.append(str(folder))
    assert main(["compare", *runs]) == 2
    assert capsys.readouterr().err == (
        f"maxminq compare: error: RUN_DIR: {runs[1]} ran my_pkg:Chain-v0 with --env-kwargs "
        f'none, {runs[0]} with {{"n": 6}}; returns of different environments cannot be '
        "compared (a keyword given at its default value counts as another environment too: "
        "train the runs to compare with the same --env-kwargs)\n"
    )
