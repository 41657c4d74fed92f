"""Bad inputs to our environments: each is refused with a one-line error naming the option,
never accepted silently (a misspelt boolean, another game under an id, a fractional seed),
and edge inputs of the environments' code paths."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from maxminq.cli import main
from maxminq.envs import get_env_defaults, make, make_vector
from maxminq.envs.api import make_with_kwargs
from maxminq.envs.catcher import CatcherVectorEnv
from maxminq.errors import UsageError

PLE_IDS = ["maxminq/Catcher-v0", "maxminq/Pixelcopter-v0"]


BREAKOUT = "maxminq/MinAtar-Breakout-v0"


def _one_line(err: pytest.ExceptionInfo[BaseException]) -> str:
    msg = str(err.value)
    assert "\n" not in msg
    return msg


def _video_driver_after_import(**display: str) -> str:
    """SDL_VIDEODRIVER in a fresh interpreter after ``import maxminq.envs``."""
    import os
    import subprocess
    import sys

    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("SDL_VIDEODRIVER", "DISPLAY", "WAYLAND_DISPLAY")
    }
    env.update(display)
    code = "import os, maxminq.envs; print(os.environ.get('SDL_VIDEODRIVER', '<unset>'))"
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


@pytest.mark.parametrize("env_id", PLE_IDS)
@pytest.mark.parametrize("value", ["false", 0, 1.0, None])
def test_normalize_must_be_a_bool(env_id: str, value: object) -> None:
    # "false" (a JSON string) is truthy: it used to switch normalisation on silently.
    with pytest.raises(ValueError, match="normalize") as err:
        make(env_id, normalize=value)
    _one_line(err)
    with pytest.raises(ValueError, match="normalize"):
        make_vector(env_id, [0], normalize=value)
    # numpy's bool is a bool: the same observations as normalize=True
    a = make(env_id, normalize=np.True_).reset(seed=3)[0]
    np.testing.assert_array_equal(a, make(env_id, normalize=True).reset(seed=3)[0])
    assert not np.array_equal(a, make(env_id).reset(seed=3)[0])


def test_env_kwargs_string_boolean_is_a_usage_error_for_train() -> None:
    with pytest.raises(UsageError, match=r"--env-kwargs: .*normalize") as err:
        make_with_kwargs("maxminq/Catcher-v0", {"normalize": "false"})
    _one_line(err)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"difficulty_ramping": "no"}, "difficulty_ramping"),
        ({"minimal_action_set": 1}, "minimal_action_set"),
        ({"sticky_action_prob": "0.1"}, "sticky_action_prob"),
        ({"sticky_action_prob": True}, "sticky_action_prob"),
        ({"render_scale": 0}, "render_scale"),
        ({"render_scale": 2.5}, "render_scale"),
    ],
)
def test_minatar_options_are_type_checked(kwargs: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name) as err:
        make(BREAKOUT, **kwargs)
    _one_line(err)


def test_minatar_accepts_its_documented_option_values() -> None:
    env = make(
        BREAKOUT,
        sticky_action_prob=0,
        difficulty_ramping=False,
        minimal_action_set=np.True_,
        render_mode="rgb_array",
        render_scale=np.int64(3),
    )
    env.reset(seed=0)
    assert env.action_space.n == 3
    assert env.render().shape == (30, 30, 3)


@pytest.mark.parametrize("game", ["freeway", "pong"])
def test_game_keyword_cannot_change_the_game_of_an_id(game: str) -> None:
    # Breakout's id with {"game": "freeway"} used to train Freeway under Breakout's name;
    # with "pong" it was a ModuleNotFoundError traceback.
    with pytest.raises(ValueError, match="game") as err:
        make(BREAKOUT, game=game)
    assert "maxminq/MinAtar-Breakout-v0" in _one_line(err)
    with pytest.raises(UsageError, match="--env-kwargs"):
        make_with_kwargs(BREAKOUT, {"game": game})


def test_unknown_minatar_game_is_one_line() -> None:
    from maxminq.envs.minatar import MinAtarEnv

    with pytest.raises(ValueError, match="game 'pong'") as err:
        MinAtarEnv("pong")
    assert "breakout" in _one_line(err)


@pytest.mark.parametrize("seed", [1.5, True, -1, "3"])
def test_seed_must_be_a_non_negative_integer(seed: object) -> None:
    # 1.5 used to be truncated to 1 silently; True meant seed 1.
    with pytest.raises(ValueError, match="seed") as err:
        make("maxminq/Catcher-v0", seed=seed)
    _one_line(err)
    with pytest.raises(ValueError, match="seed"):
        make_vector("maxminq/Catcher-v0", [0, seed])
    with pytest.raises(ValueError, match="seed"):
        make_vector(BREAKOUT, [seed])


def test_numpy_integer_seeds_are_seeds() -> None:
    a = make("maxminq/Catcher-v0", seed=np.int64(5)).reset()[0]
    b = make("maxminq/Catcher-v0").reset(seed=5)[0]
    np.testing.assert_array_equal(a, b)
    v = make_vector("maxminq/Catcher-v0", [np.int32(5)]).reset()[0]
    np.testing.assert_array_equal(v[0], b)


def test_env_id_must_be_a_string() -> None:
    with pytest.raises(UsageError, match="--env") as err:
        make(None)  # type: ignore[arg-type]
    _one_line(err)


@pytest.mark.parametrize("env_id", PLE_IDS)
def test_vector_render_mode_is_checked(env_id: str) -> None:
    # "human" used to be accepted and render() then returned None without a word.
    with pytest.raises(ValueError, match="render_mode"):
        make_vector(env_id, [0, 1], render_mode="human")
    v = make_vector(env_id, [0, 1], render_mode="rgb_array")
    v.reset()
    frames = v.render()
    assert len(frames) == 2 and frames[0].dtype == np.uint8


@pytest.mark.parametrize("env_id", PLE_IDS)
def test_vector_step_before_reset_is_refused(env_id: str) -> None:
    # It used to step games that were never set up (fruit at (0, 0), zero random state).
    v = make_vector(env_id, [0, 1])
    with pytest.raises(gym.error.ResetNeeded):
        v.step(np.zeros(2, dtype=np.int64))
    v.reset()
    v.step(np.zeros(2, dtype=np.int64))


def test_vector_reset_seed_of_the_wrong_type_is_one_line() -> None:
    v = CatcherVectorEnv(num_envs=2)
    with pytest.raises(ValueError, match="seed") as err:
        v.reset(seed=1.0)  # type: ignore[arg-type]
    _one_line(err)
    # an int gives slot i the seed + i, as documented
    a = v.reset(seed=7)[0]
    b = make("maxminq/Catcher-v0").reset(seed=8)[0]
    np.testing.assert_array_equal(a[1], b)


def test_paper_ids_check_and_show_the_users_env_kwargs(capsys: pytest.CaptureFixture) -> None:
    # For a paper id the keywords used to be ignored: a refused one passed, and the shown
    # env_kwargs were the registry's, not what a run with them would use.
    with pytest.raises(UsageError, match="--env-kwargs: .*foo") as err:
        get_env_defaults("maxminq/Catcher-v0", {"foo": 1})
    assert 'refused {"foo": 1}:' in _one_line(err)  # the user's keywords, not the paper's
    d = get_env_defaults("maxminq/Catcher-v0", {"normalize": False})
    assert d.env_kwargs == {"normalize": False}
    assert d.paper and d.train_steps == 3_500_000
    d = get_env_defaults("maxminq/MinAtar-Asterix-v0", {"sticky_action_prob": 0.0})
    assert d.env_kwargs == {"sticky_action_prob": 0.0}
    assert get_env_defaults("maxminq/Catcher-v0").env_kwargs == {"normalize": True}

    assert main(["envs", "--env", "maxminq/Catcher-v0", "--env-kwargs", '{"foo": 1}']) == 2
    err = capsys.readouterr().err.strip()
    assert "foo" in err and len(err.splitlines()) == 1


def test_unknown_id_message_points_to_a_real_list_of_ids(capsys: pytest.CaptureFixture) -> None:
    # It said "'maxminq envs' lists them" of every registered Gymnasium id, but that command
    # prints the paper's ids only.
    with pytest.raises(UsageError) as err:
        make("NoSuchThing-v0")
    msg = _one_line(err)
    assert "gymnasium.pprint_registry()" in msg
    assert main(["envs"]) == 0
    table = capsys.readouterr().out
    assert "CartPole-v1" not in table  # so the message must not send the user there for it
    with pytest.raises(UsageError) as err:
        make("maxminq/Catcher-v9")
    assert _one_line(err).endswith("('maxminq envs' lists the paper's ids)")


@pytest.mark.parametrize("env_id", [*PLE_IDS, BREAKOUT, "CartPole-v1"])
def test_vector_envs_pickle_and_continue_identically(env_id: str) -> None:
    # make_vector's SyncVectorEnv held lambdas, which the standard pickle refuses
    # (multiprocessing, copy-by-pickle); the native batched envs always pickled.
    import pickle

    v = make_vector(env_id, [1, 2])
    v.reset()
    ones = np.ones(2, dtype=np.int64)
    v.step(ones)
    w = pickle.loads(pickle.dumps(v))
    for _ in range(20):
        a, b = v.step(ones), w.step(ones)
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])


def test_a_class_given_instead_of_an_id_gets_the_register_hint() -> None:
    # 'module:Class' (an entry point) is a common mix-up with 'module:EnvId'.
    with pytest.raises(UsageError) as err:
        make("maxminq.envs.catcher:CatcherEnv")
    msg = _one_line(err)
    assert "CatcherEnv is a class in 'maxminq.envs.catcher', not an id" in msg
    assert "registered as 'maxminq/Catcher-v0': give --env maxminq/Catcher-v0" in msg


def test_module_prefixed_ids_of_our_games_use_the_native_batched_kernels() -> None:
    v = make_vector("maxminq.envs:maxminq/Catcher-v0", [0, 1])
    assert isinstance(v, CatcherVectorEnv) and v.max_episode_steps == 2000


def test_import_forces_the_dummy_video_driver_only_without_a_display() -> None:
    # It was forced on every import, so render_mode="human" (ours through gym's
    # HumanRendering, LunarLander's own) never opened a window on a desktop.
    assert _video_driver_after_import() == "dummy"
    assert _video_driver_after_import(DISPLAY=":0") == "<unset>"
    assert _video_driver_after_import(WAYLAND_DISPLAY="wayland-0") == "<unset>"


@pytest.mark.parametrize("env_id", PLE_IDS)
def test_reset_mask_restarts_only_the_masked_slots(env_id: str) -> None:
    # The native batched envs ignored options["reset_mask"] and restarted every slot;
    # Gymnasium's SyncVectorEnv (used for every other id) restarts the masked ones only.
    cap = 12
    v = make_vector(env_id, [3, 4], max_episode_steps=cap)
    ref = make_vector(env_id, [3, 4], max_episode_steps=cap)  # never partially reset
    v.reset()
    ref.reset()
    noop = np.full(2, v.single_action_space.n - 1, dtype=np.int64)
    for _ in range(5):
        v.step(noop)
        ref.step(noop)
    before = v.step(noop)[0]
    ref.step(noop)
    obs, _ = v.reset(seed=[9, 123], options={"reset_mask": np.array([True, False])})
    np.testing.assert_array_equal(obs[0], make(env_id).reset(seed=9)[0])
    np.testing.assert_array_equal(obs[1], before[1])  # slot 1 untouched, its seed unused
    for t in range(6, cap):
        a, b = v.step(noop), ref.step(noop)
        np.testing.assert_array_equal(a[0][1], b[0][1])
        # slot 1 keeps its elapsed steps: truncated at the cap with the reference
        assert a[3][1] == b[3][1] == (t + 1 == cap)
        assert not a[3][0]
    with pytest.raises(ValueError, match="reset_mask"):
        v.reset(options={"reset_mask": np.array([1, 0])})
    with pytest.raises(ValueError, match="first reset"):
        make_vector(env_id, [0, 1]).reset(options={"reset_mask": np.array([True, False])})


@pytest.mark.parametrize("env_id", [*PLE_IDS, "maxminq/MinAtar-Asterix-v0"])
def test_no_global_random_state_is_read_or_written(env_id: str) -> None:
    import random

    def run(global_seed: int) -> tuple[list[np.ndarray], bool]:
        # The legacy global state is the thing under test here.
        np.random.seed(global_seed)  # noqa: NPY002
        random.seed(global_seed)
        np_state, py_state = np.random.get_state()[1].copy(), random.getstate()  # noqa: NPY002
        env = make(env_id, seed=21)
        obs = [env.reset()[0]]
        for t in range(300):
            o, _, term, trunc, _ = env.step(t % 2)
            obs.append(o)
            if term or trunc:
                obs.append(env.reset()[0])
        untouched = np.array_equal(np.random.get_state()[1], np_state)  # noqa: NPY002
        return obs, untouched and random.getstate() == py_state

    a, untouched_a = run(0)
    b, untouched_b = run(1)
    assert untouched_a and untouched_b
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def test_make_vector_takes_any_sequence_of_seeds_and_refuses_others() -> None:
    # np.arange(4) used to fail on "truth value of an array is ambiguous"; an int on
    # "'int' object is not iterable".
    for env_id in ("maxminq/Catcher-v0", BREAKOUT):
        v = make_vector(env_id, np.arange(3))
        w = make_vector(env_id, range(3))
        np.testing.assert_array_equal(v.reset()[0], w.reset()[0])
        for bad in (5, "012", None):
            with pytest.raises(ValueError, match="seeds") as err:
                make_vector(env_id, bad)  # type: ignore[arg-type]
            _one_line(err)
    with pytest.raises(ValueError, match="num_envs"):
        CatcherVectorEnv(num_envs=0)


def test_a_module_in_the_current_folder_not_on_the_path_gets_the_pythonpath_hint(
    tmp_path, monkeypatch
) -> None:
    # The console script does not put the current folder on sys.path, so `maxminq train
    # --env my_envs:X-v0` next to my_envs.py fails to import it; say how to fix that.
    (tmp_path / "hint_envs_s13.py").write_text("X = 1\n")
    monkeypatch.chdir(tmp_path)
    import sys

    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", ".", str(tmp_path))])
    with pytest.raises(UsageError) as err:
        make("hint_envs_s13:X-v0")
    msg = _one_line(err)
    assert "hint_envs_s13.py is in the current folder" in msg
    assert "PYTHONPATH=." in msg


def test_a_dependency_missing_in_ones_module_is_not_blamed_on_the_path(
    tmp_path, monkeypatch
) -> None:
    (tmp_path / "dep_envs_s13.py").write_text("import no_such_dependency_s13\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(UsageError) as err:
        make("dep_envs_s13:X-v0")
    msg = _one_line(err)
    assert "No module named 'no_such_dependency_s13'" in msg
    assert "PYTHONPATH=." not in msg


@pytest.mark.parametrize(
    ("given", "suggested"),
    [
        ("Catcher-PLE-v0", "maxminq/Catcher-v0"),  # the id of the authors' gym-games
        ("Pixelcopter-PLE-v0", "maxminq/Pixelcopter-v0"),
        ("Catcher-v0", "maxminq/Catcher-v0"),
        ("MinAtar/Breakout-v0", "maxminq/MinAtar-Breakout-v0"),  # minatar.gym's ids
        ("MinAtar/SpaceInvaders-v1", "maxminq/MinAtar-SpaceInvaders-v0"),
        ("asterix", "maxminq/MinAtar-Asterix-v0"),
    ],
)
def test_ids_of_the_original_packages_suggest_ours(given: str, suggested: str) -> None:
    with pytest.raises(UsageError) as err:
        make(given)
    msg = _one_line(err)
    assert f"did you mean {suggested}" in msg
    if given.endswith("-v1"):  # minatar.gym's v1 ids use the minimal action set
        assert "--env-kwargs '{\"minimal_action_set\": true}'" in msg


def test_a_refused_keyword_is_told_the_keywords_the_constructor_takes() -> None:
    """The hint reads the registered entry point's signature (envs.api.creator_parameters),
    leaving out render_mode and the keywords the id fixes (MinAtar's game)."""
    from maxminq.envs.api import make_with_kwargs
    from maxminq.errors import UsageError

    with pytest.raises(UsageError) as caught:
        make_with_kwargs("CartPole-v1", {"bogus": 1})
    assert str(caught.value).endswith("(its keywords: sutton_barto_reward)")
    with pytest.raises(UsageError) as caught:
        make_with_kwargs("maxminq/MinAtar-Breakout-v0", {"bogus": 1})
    assert "(its keywords: sticky_action_prob, " in str(caught.value)
    assert "game" not in str(caught.value).rpartition("(its keywords:")[2]
