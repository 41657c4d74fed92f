"""make / make_vector / registry / MinAtar wrapper / `maxminq envs`."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
from gymnasium.utils.env_checker import check_env

import maxminq.envs as envs
from maxminq.cli import main
from maxminq.envs import PAPER_ENVS, get_env_defaults, make, make_vector
from maxminq.errors import UsageError

OUR_IDS = ["maxminq/Catcher-v0", "maxminq/Pixelcopter-v0", *envs.MINATAR_IDS]


def _rollout(env: gym.Env, actions: np.ndarray) -> list[tuple]:
    """Run the actions, resetting (without seed) after each episode; record everything."""
    obs, _ = env.reset()
    out = [(obs.copy(),)]
    for a in actions:
        obs, r, term, trunc, _ = env.step(int(a))
        out.append((obs.copy(), r, term, trunc))
        if term or trunc:
            obs, _ = env.reset()
            out.append((obs.copy(),))
    return out


def _same(a: list[tuple], b: list[tuple]) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if len(x) != len(y) or not np.array_equal(x[0], y[0]) or x[1:] != y[1:]:
            return False
    return True


def _vector_rollout(venv, actions: np.ndarray, slot: int) -> list[tuple]:  # noqa: ANN001
    """Slot ``slot`` of a same-step-autoreset VectorEnv, in ``_rollout``'s format."""
    obs, _ = venv.reset()
    out = [(obs[slot].copy(),)]
    for a in actions:
        full = np.zeros(venv.num_envs, dtype=np.int64)
        full[:] = a[1]  # the other slots
        full[slot] = a[0]
        obs, r, term, trunc, info = venv.step(full)
        if term[slot] or trunc[slot]:
            assert info["_final_obs"][slot]
            out.append(
                (
                    info["final_obs"][slot].copy(),
                    float(r[slot]),
                    bool(term[slot]),
                    bool(trunc[slot]),
                )
            )
            out.append((obs[slot].copy(),))
        else:
            out.append((obs[slot].copy(), float(r[slot]), False, False))
    return out


_USER_MODULE = '''
import gymnasium as gym
import numpy as np


class Corridor(gym.Env):
    """Ten cells; Right moves towards the goal at cell 9 (reward 1, terminal)."""

    observation_space = gym.spaces.Box(0.0, 1.0, (10,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.pos = 0
        return np.eye(10, dtype=np.float32)[self.pos], {}

    def step(self, action):
        self.pos = min(9, max(0, self.pos + (1 if action == 1 else -1)))
        done = self.pos == 9
        return np.eye(10, dtype=np.float32)[self.pos], float(done), done, False, {}


gym.register("UserCorridor-v0", entry_point=Corridor, max_episode_steps=30)
'''


BAD_ACTIONS = [7, -1, 1.5, 99, True, np.float32(1.0), np.array([1]), "1", None]


@pytest.mark.parametrize("env_id", [*OUR_IDS, "LunarLander-v3"])
def test_check_env(env_id: str) -> None:
    env = gym.make(env_id).unwrapped
    check_env(env, skip_render_check=True)
    env.close()


def test_registration_is_idempotent_and_caps() -> None:
    envs.register_envs()
    envs.register_envs()
    assert gym.spec("maxminq/Catcher-v0").max_episode_steps == 2000
    assert gym.spec("maxminq/Pixelcopter-v0").max_episode_steps == 500
    assert gym.spec("maxminq/MinAtar-Seaquest-v0").max_episode_steps == 10_000
    assert gym.spec("maxminq/MinAtar-Asterix-v0").max_episode_steps is None
    assert make("LunarLander-v3").spec.max_episode_steps == 1000


@pytest.mark.parametrize("env_id", OUR_IDS)
def test_seeding_reproduces_episodes(env_id: str) -> None:
    n = 1500 if "MinAtar" in env_id else 600
    actions = np.random.default_rng(0).integers(0, 2, size=n)
    a = _rollout(make(env_id, seed=11, max_episode_steps=60), actions)
    b = _rollout(make(env_id, seed=11, max_episode_steps=60), actions)
    c = _rollout(make(env_id, seed=12, max_episode_steps=60), actions)
    assert sum(len(x) == 1 for x in a) >= 3  # several episodes, reset without seed in between
    assert _same(a, b)
    assert not _same(a, c)
    # reset(seed=s) restarts the same stream
    env = make(env_id)
    o1, _ = env.reset(seed=5)
    o2, _ = env.reset(seed=5)
    np.testing.assert_array_equal(o1, o2)


def test_unknown_id_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="--env.*maxminq/Catcher-v0"):
        make("NoSuchEnv-v9")
    with pytest.raises(UsageError, match="--env"):
        make_vector("NoSuchEnv-v9", [0, 1])
    # Another version of a registered id, or a typo, names the registered one.
    with pytest.raises(UsageError, match=r"'LunarLander-v2'; did you mean LunarLander-v3\?"):
        make("LunarLander-v2")
    with pytest.raises(UsageError, match=r"did you mean maxminq/Catcher-v0\?"):
        make("maxminq/Cacher-v0")


@pytest.mark.parametrize(
    "env_id",
    ["maxminq/Catcher-v0", "maxminq/Pixelcopter-v0", "maxminq/MinAtar-Breakout-v0", "CartPole-v1"],
)
def test_make_vector_slot_equals_single_run(env_id: str) -> None:
    """A seed's trajectory is the same alone (make) or among others (make_vector)."""
    seeds = [3, 7, 8]
    cap = {"maxminq/Pixelcopter-v0": 6, "maxminq/MinAtar-Breakout-v0": 12}.get(env_id, 40)
    n_actions = 2
    rng = np.random.default_rng(1)
    actions = rng.integers(0, n_actions, size=(400, 2))  # column 0 drives the slot under test
    venv = make_vector(env_id, seeds, max_episode_steps=cap)
    assert venv.metadata["autoreset_mode"] == gym.vector.AutoresetMode.SAME_STEP
    slot = 1
    got = _vector_rollout(venv, actions, slot)
    single = _rollout(make(env_id, seed=seeds[slot], max_episode_steps=cap), actions[:, 0])
    assert _same(got, single)
    assert any(len(x) == 4 and x[3] for x in got)  # the cap truncated at least one episode


@pytest.mark.parametrize(
    ("env_id", "cls"),
    [
        ("maxminq/Catcher-v0", "CatcherVectorEnv"),
        ("maxminq/Pixelcopter-v0", "PixelcopterVectorEnv"),
    ],
)
def test_batched_equals_single_for_every_slot(env_id: str, cls: str) -> None:
    seeds = [0, 1, 2, 3, 4, 5, 6, 7]
    cap = 150 if "Catcher" in env_id else 9
    venv = make_vector(env_id, seeds, max_episode_steps=cap)
    assert type(venv).__name__ == cls
    n = venv.single_action_space.n
    actions = np.random.default_rng(2).integers(0, n, size=(700, len(seeds)))
    obs, _ = venv.reset()
    singles = [make(env_id, seed=s, max_episode_steps=cap) for s in seeds]
    single_obs = [e.reset()[0] for e in singles]
    np.testing.assert_array_equal(obs, np.stack(single_obs))
    n_term = n_trunc = 0
    for t in range(len(actions)):
        obs, r, term, trunc, info = venv.step(actions[t])
        for i, env in enumerate(singles):
            o, ri, te, tr, _ = env.step(int(actions[t, i]))
            assert (r[i], term[i], trunc[i]) == (ri, te, tr)
            if te or tr:
                np.testing.assert_array_equal(info["final_obs"][i], o)
                o, _ = env.reset()
            np.testing.assert_array_equal(obs[i], o)
        n_term += int(term.sum())
        n_trunc += int(trunc.sum())
    assert n_term > 0 and n_trunc > 0


def test_fallback_defaults_for_other_gymnasium_ids() -> None:
    cp = get_env_defaults("CartPole-v1")
    assert cp.network == "mlp" and cp.max_episode_steps == 500 and not cp.paper
    with pytest.raises(UsageError, match="--env"):
        get_env_defaults("NoSuchEnv-v9")


@pytest.mark.parametrize(
    ("game", "channels", "minimal"),
    [
        ("Asterix", 4, 5),
        ("Breakout", 4, 3),
        ("Freeway", 7, 3),
        ("Seaquest", 10, 6),
        ("SpaceInvaders", 6, 4),
    ],
)
def test_minatar_spaces_and_action_sets(game: str, channels: int, minimal: int) -> None:
    env = make(f"maxminq/MinAtar-{game}-v0", seed=0)
    obs, _ = env.reset()
    assert obs.shape == (channels, 10, 10) and obs.dtype == np.uint8
    assert env.observation_space.shape == obs.shape and env.observation_space.dtype == np.uint8
    assert env.action_space.n == 6
    assert make(f"maxminq/MinAtar-{game}-v0", minimal_action_set=True).action_space.n == minimal
    f32 = make(f"maxminq/MinAtar-{game}-v0", obs_dtype="float32", seed=0)
    o32, _ = f32.reset()
    assert o32.dtype == np.float32 and f32.observation_space.contains(o32)
    np.testing.assert_array_equal(o32, obs)


def test_minatar_sticky_actions_option() -> None:
    """With sticky probability 1 every action repeats the reset action 0 (and the RNG use
    is the same), so random actions give exactly the all-noop trajectory."""
    rng = np.random.default_rng(3)
    acts = rng.integers(1, 6, size=300)
    a = _rollout(make("maxminq/MinAtar-Breakout-v0", seed=4, sticky_action_prob=1.0), acts)
    b = _rollout(make("maxminq/MinAtar-Breakout-v0", seed=4, sticky_action_prob=1.0), 0 * acts)
    c = _rollout(make("maxminq/MinAtar-Breakout-v0", seed=4, sticky_action_prob=0.0), acts)
    assert _same(a, b) and not _same(a, c)


def test_render_rgb_arrays() -> None:
    for env_id, shape in [
        ("maxminq/Catcher-v0", (64, 64, 3)),
        ("maxminq/Pixelcopter-v0", (48, 48, 3)),
        ("maxminq/MinAtar-Asterix-v0", (80, 80, 3)),
    ]:
        env = make(env_id, render_mode="rgb_array", seed=0)
        env.reset()
        img = env.render()
        assert img.shape == shape and img.dtype == np.uint8 and img.max() > 0


def test_normalize_option() -> None:
    raw = make("maxminq/Catcher-v0", seed=1)
    norm = make("maxminq/Catcher-v0", seed=1, normalize=True)
    o_raw, _ = raw.reset()
    o_norm, _ = norm.reset()
    expected = (o_raw - np.array([26, 0, 26, 20])) / np.array([26, 8, 26, 45])
    np.testing.assert_allclose(o_norm, expected, rtol=1e-6)
    assert norm.observation_space.contains(o_norm)


def test_envs_command_lists_ids(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["envs"]) == 0
    out = capsys.readouterr().out
    for env_id in PAPER_ENVS:
        assert env_id in out
    assert "3,500,000" in out and "centered_rmsprop" in out
    assert main(["envs", "--env", "NoSuchEnv-v9"]) == 2
    assert "--env" in capsys.readouterr().err


@pytest.mark.parametrize("game", ["catcher", "pixelcopter"])
def test_fused_vector_step_matches_reference(game: str) -> None:
    """The fused numba vector step equals the plain step / time limit / reset sequence."""
    from maxminq.envs._game import GameCore
    from maxminq.envs.catcher import CatcherCore
    from maxminq.envs.pixelcopter import PixelcopterCore

    cls = CatcherCore if game == "catcher" else PixelcopterCore
    fused, ref = cls(16), cls(16)
    for core in (fused, ref):
        core.rng[:] = np.arange(16, dtype=np.uint64) * np.uint64(1_000_003)
        core.reset_slots(np.ones(16, dtype=bool))
    el_f, el_r = np.zeros(16, dtype=np.int64), np.zeros(16, dtype=np.int64)
    actions = np.random.default_rng(5).integers(0, cls.n_actions, size=(400, 16))
    n_done = 0
    for t in range(400):
        got = fused.vector_step(actions[t], el_f, 25, True)
        want = GameCore.vector_step(ref, actions[t], el_r, 25, True)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w)
        n_done += got[4].size
    np.testing.assert_array_equal(el_f, el_r)
    assert n_done > 0


def test_minatar_options_reach_the_game() -> None:
    env = make("maxminq/MinAtar-Seaquest-v0", difficulty_ramping=False, sticky_action_prob=0.25)
    game = env.unwrapped.game
    assert game.env.ramping is False and game.sticky_action_prob == 0.25
    assert make("maxminq/MinAtar-Seaquest-v0").unwrapped.game.env.ramping is True
    with pytest.raises(ValueError, match="obs_dtype"):
        make("maxminq/MinAtar-Seaquest-v0", obs_dtype="int64")


def test_fallback_network_for_image_observations() -> None:
    env_id = "maxminq-test/BreakoutAlias-v0"
    if env_id not in gym.registry:
        gym.register(
            id=env_id, entry_point="maxminq.envs.minatar:MinAtarEnv", kwargs={"game": "breakout"}
        )
    d = get_env_defaults(env_id)
    assert d.network == "minatar_cnn" and not d.paper


def test_random_pixelcopter_survives_about_seven_frames() -> None:
    """The figure quoted for PLE's Pixelcopter: a random policy survives about 7 steps and
    scores -5 plus the terrain segments passed (none in 7 frames: the first leaves after 10
    frames)."""
    venv = make_vector("maxminq/Pixelcopter-v0", list(range(64)))
    venv.reset()
    rng = np.random.default_rng(0)
    lengths, returns = [], []
    length, ret = np.zeros(64), np.zeros(64)
    while len(lengths) < 2000:
        _, r, term, trunc, _ = venv.step(rng.integers(0, 2, size=64))
        length += 1
        ret += r
        for i in np.flatnonzero(term | trunc):
            lengths.append(length[i])
            returns.append(ret[i])
            length[i] = ret[i] = 0
    assert 6.0 < np.mean(lengths) < 8.5
    assert -5.0 <= np.mean(returns) < -4.5


def test_train_on_a_users_own_environment(tmp_path, monkeypatch, capsys) -> None:
    """'module:EnvId' imports the user's module, which registers the environment."""
    (tmp_path / "user_envs_mmq.py").write_text(_USER_MODULE)
    (tmp_path / "broken_envs_mmq.py").write_text('raise RuntimeError("first line\\nsecond")')
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "run"
    argv = ["train", "--env", "user_envs_mmq:UserCorridor-v0", "--agent", "maxmin-dqn"]
    argv += ["--steps", "300", "--learning-starts", "100", "--out", str(out)]
    argv += ["--eval-episodes", "2", "--no-progress", "--no-plot"]
    assert main(argv) == 0
    episodes = pd.read_csv(out / "episodes.csv")
    assert len(episodes) > 0 and (episodes["length"] <= 30).all()  # the module's own cap
    # A cap of 30 at gamma 0.99 is too short for a cut episode's bias probes (k >= 299).
    assert "only episodes that terminate give bias numbers" in capsys.readouterr().err
    for env_id, needle in [
        ("no_such_module_mmq:UserCorridor-v0", "cannot import module 'no_such_module_mmq'"),
        ("user_envs_mmq:Missing-v0", "importing 'user_envs_mmq' did not register it"),
        ("broken_envs_mmq:Any-v0", "(RuntimeError: first line second)"),
    ]:
        argv = ["train", "--env", env_id, "--out", str(tmp_path / "bad"), "--no-progress"]
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and needle in err and "--env" in err
    assert not (tmp_path / "bad" / "runs.csv").exists()


@pytest.mark.parametrize("env_id", OUR_IDS)
def test_invalid_action_is_a_value_error_and_changes_nothing(env_id: str) -> None:
    env, ref = make(env_id, seed=3), make(env_id, seed=3)
    n = env.action_space.n
    env.reset(), ref.reset()
    for bad in [*BAD_ACTIONS, n, -n]:
        with pytest.raises(ValueError, match=rf"action .* \[0, {n}\)"):
            env.step(bad)
    # Every integer type in range is accepted and plays the same game as a Python int.
    good = [np.int8(1), np.uint16(0), np.int64(n - 1), np.array(1, dtype=np.int32), 0, 1]
    for a in good:
        got, want = env.step(a), ref.step(int(a))
        np.testing.assert_array_equal(got[0], want[0])
        assert got[1:4] == want[1:4]


@pytest.mark.parametrize(
    "env_id", ["maxminq/Catcher-v0", "maxminq/Pixelcopter-v0", *envs.MINATAR_IDS]
)
def test_invalid_action_batch_is_rejected_before_any_sub_env_moves(env_id: str) -> None:
    venv, ref = make_vector(env_id, [5, 6, 7]), make_vector(env_id, [5, 6, 7])
    n = venv.single_action_space.n
    venv.reset(), ref.reset()
    bad = [[0, 0, n], [0, -1, 0], [0.0, 1.0, 0.0], [True, False, True], [0, 1], 1, [[0, 0, 0]]]
    for actions in bad:
        with pytest.raises(ValueError, match=rf"\[0, {n}\)"):
            venv.step(actions)
    for actions in ([0, 1, 0], np.array([1, 0, 1], dtype=np.uint8), [n - 1] * 3):
        got, want = venv.step(actions), ref.step(np.asarray(actions, dtype=np.int64))
        for g, w in zip(got[:4], want[:4], strict=True):
            np.testing.assert_array_equal(g, w)


def test_freeway_time_end_is_truncation_not_termination() -> None:
    """MinAtar's freeway.py: terminate_timer starts at 2,500, drops by 1 per act and the
    game ends when it goes below 0, i.e. at the 2,501st step, whatever the agent does."""
    env = make("maxminq/MinAtar-Freeway-v0", seed=0)
    env.reset()
    flags = []
    for t in range(3000):
        _, _, term, trunc, _ = env.step(t % 6)
        flags.append((term, trunc))
        if term or trunc:
            break
    assert len(flags) == 2501
    assert flags[-1] == (False, True)
    assert not any(term or trunc for term, trunc in flags[:-1])
    # The next episode ends the same way (reset restarts the timer).
    env.reset()
    steps = [env.step(3)[2:4] for _ in range(2501)]
    assert steps[-1] == (False, True) and steps[-2] == (False, False)


def test_other_minatar_ends_stay_terminated() -> None:
    env = make("maxminq/MinAtar-Breakout-v0", seed=0)
    env.reset()
    for _ in range(5000):
        _, _, term, trunc, _ = env.step(0)  # never moving: the ball is soon lost
        if term or trunc:
            break
    assert (term, trunc) == (True, False)


@pytest.mark.parametrize("env_id", ["maxminq/Catcher-v0", "maxminq/MinAtar-Seaquest-v0"])
@pytest.mark.parametrize("cap", [-1, 0, -5, 2.5, True])
def test_non_positive_cap_is_a_value_error(env_id: str, cap: object) -> None:
    """Gymnasium's make drops the time limit for -1; ours refuses instead of silently."""
    with pytest.raises(ValueError, match="max_episode_steps"):
        make(env_id, max_episode_steps=cap)
    with pytest.raises(ValueError, match="max_episode_steps"):
        make_vector(env_id, [0, 1], max_episode_steps=cap)


def test_cap_none_keeps_the_registered_one_and_numpy_ints_work() -> None:
    assert make("maxminq/Catcher-v0", max_episode_steps=None).spec.max_episode_steps == 2000
    env = make("maxminq/Catcher-v0", seed=0, max_episode_steps=np.int64(3))
    env.reset()
    assert [env.step(2)[3] for _ in range(3)] == [False, False, True]
    venv = make_vector("maxminq/Catcher-v0", [0], max_episode_steps=None)
    assert venv.max_episode_steps == 2000


@pytest.mark.parametrize(
    ("game", "kwargs"),
    [
        ("asterix", {}),
        ("breakout", {"minimal_action_set": True, "sticky_action_prob": 0.3}),
        ("freeway", {}),
        ("seaquest", {"difficulty_ramping": False, "sticky_action_prob": 0.3}),
        ("space_invaders", {}),
    ],
)
def test_minatar_trajectories_match_the_minatar_package(game: str, kwargs: dict) -> None:
    """Frame by frame against ``minatar.Environment`` given the RandomState our reset(seed)
    derives (one draw from Gymnasium's np_random seeds an MT19937, shared by the sticky-action
    draw and the game). The one difference, mirrored here: our reset sets MinAtar's sticky
    ``last_action`` to 0, where MinAtar carries it over from the previous episode."""
    from gymnasium.utils import seeding
    from minatar import Environment

    name = {"space_invaders": "SpaceInvaders"}.get(game, game.title())
    env = make(f"maxminq/MinAtar-{name}-v0", max_episode_steps=None, **kwargs)
    raw = Environment(
        game,
        sticky_action_prob=kwargs.get("sticky_action_prob", 0.1),
        difficulty_ramping=kwargs.get("difficulty_ramping", True),
    )
    seed = 4
    draw = int(seeding.np_random(seed)[0].integers(0, 2**63))
    raw.random = raw.env.random = np.random.RandomState(np.random.MT19937(draw))
    action_set = raw.minimal_action_set() if kwargs.get("minimal_action_set") else range(6)
    action_set = list(action_set)
    obs, _ = env.reset(seed=seed)
    raw.last_action = 0
    raw.reset()
    actions = np.random.default_rng(0).integers(len(action_set), size=6000)
    episodes = 0
    for a in actions:
        np.testing.assert_array_equal(obs, raw.state().transpose(2, 0, 1))
        obs, r, term, trunc, _ = env.step(int(a))
        r_raw, done_raw = raw.act(action_set[a])
        assert r == r_raw
        assert (term or trunc) == bool(done_raw)
        assert trunc == (bool(done_raw) and game == "freeway")  # only Freeway's timer
        if term or trunc:
            episodes += 1
            obs, _ = env.reset()
            raw.last_action = 0
            raw.reset()
    assert episodes >= 2
