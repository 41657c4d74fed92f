"""A researcher's own Gymnasium environment named on the command line: ``maxminq envs --env``
refuses what ``maxminq train`` then refuses (channels-last images, MultiDiscrete or shifted
Discrete actions) with train's hint, ``--env module:function`` and ``--env module:Name-v0``
for an entry point the module never registered, ids without their namespace; scripts that
train on an id they register themselves. (``maxminq status`` and ``compare`` on runs of such
an environment: experiments/test_status.py, analysis/test_compare.py.)"""

from __future__ import annotations

import importlib
import subprocess
import sys
import textwrap

import pytest
from helpers import error_line
from own_env_classes import J22_ENVS as MODULE
from own_env_classes import J22_ENVS_SOURCE
from user_modules import user_module

from maxminq.cli import main


@pytest.fixture(scope="module")
def own_module(tmp_path_factory):
    """The user's module, importable as ``j22_own_envs``."""
    with user_module(tmp_path_factory.mktemp("own_envs"), MODULE, J22_ENVS_SOURCE) as name:
        yield importlib.import_module(name)


def test_envs_refuses_channels_last_images_with_trains_hint(own_module, capsys) -> None:
    """It listed '--network minatar_cnn' as what train would use for (8, 8, 3) images,
    and train then refused them."""
    env = f"{MODULE}:J22Pixels-v0"
    line = error_line(capsys, ["envs", "--env", env])
    assert line.startswith(f"maxminq envs: error: --env: 'maxminq train --env {env}' refuses it")
    assert "(8, 8, 3) (channels last? move them first: (3, 8, 8)" in line
    # the same reason as train gives
    train = error_line(capsys, ["train", "--env", env, "--steps", "50", "--out", "unused"])
    assert train.split("needs ")[1] == line.split("needs ")[1]


def test_envs_multidiscrete_says_to_number_the_combinations(own_module, capsys) -> None:
    """Its hint was 'e.g. gymnasium.wrappers.DiscretizeAction for a Box', for a space
    that is no Box."""
    line = error_line(capsys, ["envs", "--env", f"{MODULE}:J22Pair-v0"])
    assert "MultiDiscrete([2 3])" in line
    assert line.endswith(
        "give the environment one Discrete(n) action that numbers the combinations (n = 6, "
        "the product of its nvec)"
    )
    assert "DiscretizeAction" not in line


def test_envs_refuses_actions_that_do_not_start_at_zero(own_module, capsys) -> None:
    """Discrete(2, start=1) was listed; train refuses it (the agents act with 0..n-1)."""
    line = error_line(capsys, ["envs", "--env", f"{MODULE}:J22FromOne-v0"])
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
    line = error_line(capsys, ["envs", "--env", f"{MODULE}:make_unregistered"])
    assert line == (
        f"maxminq envs: error: --env: make_unregistered is a function in '{MODULE}', not a "
        f"registered id; register it in that module with gymnasium.register("
        f"id='make_unregistered-v0', entry_point='{MODULE}:make_unregistered') and give "
        f"--env {MODULE}:make_unregistered-v0"
    )


def test_a_registered_function_entry_point_names_its_id(own_module, capsys) -> None:
    line = error_line(capsys, ["envs", "--env", f"{MODULE}:make_line"])
    assert line.endswith(
        f"make_line is a function in '{MODULE}', not an id; it is registered as "
        f"'J22Line-v0': give --env {MODULE}:J22Line-v0"
    )


def test_name_v0_of_an_entry_point_never_registered_says_to_register_it(own_module, capsys) -> None:
    """'--env j22_own_envs:J22NeverRegistered-v0' (the module defines the class but forgot
    gymnasium.register) listed every paper id, not the line that registers it."""
    line = error_line(capsys, ["envs", "--env", f"{MODULE}:J22NeverRegistered-v0"])
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
    line = error_line(capsys, ["envs", "--env", f"{MODULE}:J22Pair-v1"])
    assert line.endswith(
        f"did you mean {MODULE}:J22Pair-v0? ('maxminq envs' lists the paper's ids)"
    )


def test_an_id_without_its_namespace_is_pointed_to_it(own_module, capsys) -> None:
    """gymnasium.register(id='j22lab/J22Walk-v0') registers the id with its namespace;
    '--env j22_own_envs:J22Walk-v0' listed every paper id instead of naming it."""
    line = error_line(capsys, ["envs", "--env", f"{MODULE}:J22Walk-v0"])
    assert line.endswith(
        f"did you mean {MODULE}:j22lab/J22Walk-v0? ('maxminq envs' lists the paper's ids)"
    )


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
