"""Leftovers of session 20's reviews: the self-cut ``CutEpisodesWarning`` counted "3 of the
4 training episodes shorter than 299 steps" (as if 4 were short); ``TrainConfig(n_steps=...)``
was asked "did you mean steps?" (Stable-Baselines3's n_steps is no run length), and other
SB3/CleanRL keywords with no field here got no hint; ``maxminq experiment --sigma2 1
mountain-car`` (an option before the sub-command) said "EXPERIMENT: unknown '1'"."""

from __future__ import annotations

import pytest

from maxminq.cli import main
from maxminq.deep.bias_probes import CutTally, cut_episodes_message
from maxminq.deep.config import TrainConfig

# ------------------------------------------------------------ 1. the self-cut warning's count


def test_the_self_cut_count_says_the_cut_ones_were_short_not_all_of_them() -> None:
    why = "a cut episode's probe counts only 299+ steps before the cut: gamma^k <= 0.05"
    got = cut_episodes_message(None, 0.99, why, CutTally(3, 4, 1200, 1500), "in all")
    assert "; in all it cut 3 of the 4 training episodes in fewer than 299 steps, which " in got
    assert "shorter than" not in got
    # the cap's words are as they were: every cut episode counts there
    assert cut_episodes_message(200, 0.99, "w", CutTally(1, 2, 5, 10), "in all") == (
        "--max-episode-steps 200 with --gamma 0.99: only episodes that terminate give bias "
        "numbers (w); in all it cut 1 of the 2 training episodes, which held 50% of the "
        "steps since learning started: about that share of the bias probes did not count"
    )


# -------------------------------------------- 2. SB3/CleanRL keywords with no field here


def _refusal(**kwargs: object) -> str:
    with pytest.raises(TypeError) as info:
        TrainConfig(env_id="CartPole-v1", **kwargs)  # type: ignore[arg-type]
    return str(info.value)


def test_n_steps_is_not_taken_for_the_runs_length() -> None:
    msg = _refusal(n_steps=5)
    assert "did you mean" not in msg, msg
    assert msg.startswith("TrainConfig.__init__() got an unexpected keyword argument 'n_steps'; ")
    assert "no equivalent here" in msg and "one-step" in msg
    assert "not the run's length, which is steps" in msg


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("train_freq", "one learning update every environment step from learning_starts on"),
        ("gradient_steps", "(train_freq=1, gradient_steps=1)"),
        ("train_frequency", "one learning update every environment step"),
        ("tau", "copied whole (their tau=1) every target_update steps"),
        ("replay_buffer_class", "a uniform replay of buffer_size transitions per seed"),
        ("device", "training runs on the CPU"),
        ("cuda", "training runs on the CPU"),
        ("verbose", "run_training(..., progress=False)"),
    ],
)
def test_keywords_with_no_field_here_say_what_maxminq_does(name: str, said: str) -> None:
    msg = _refusal(**{name: 1})
    assert f"; no equivalent here ({name} is Stable-Baselines3's or CleanRL's): " in msg, msg
    assert said in msg, msg


def test_sb3s_policy_is_the_network_and_its_same_named_keywords_are_taken() -> None:
    msg = _refusal(policy="MlpPolicy")
    assert "; did you mean network, 'mlp' or 'minatar_cnn'" in msg, msg
    c = TrainConfig(
        env_id="CartPole-v1", learning_starts=7, buffer_size=100, batch_size=8, gamma=0.9
    )
    assert (c.learning_starts, c.buffer_size, c.batch_size, c.gamma) == (7, 100, 8, 0.9)


# ------------------------------------ 3. an option before ``maxminq experiment``'s sub-command


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["--sigma2", "1", "mountain-car"],
            "--sigma2: put the sub-command first, e.g. maxminq experiment mountain-car --sigma2 1",
        ),
        (
            ["--runs", "3", "toy-mdp", "--quick"],
            "--runs: put the sub-command first, e.g. maxminq experiment toy-mdp --runs 3 --quick",
        ),
        (
            ["--quick", "toy-mdp"],  # was "--quick (did you mean --quick?)"
            "--quick: put the sub-command first, e.g. maxminq experiment toy-mdp --quick",
        ),
        (
            ["--quick", "--runs", "3"],  # was "EXPERIMENT: unknown '3'"
            "--quick: put the sub-command first, e.g. maxminq experiment toy-mdp --quick --runs 3",
        ),
        (
            ["--sigma2", "1"],  # no sub-command: the one that takes the option
            "--sigma2: put the sub-command first, e.g. maxminq experiment mountain-car --sigma2 1",
        ),
    ],
)
def test_an_option_before_the_sub_command_says_to_put_it_first(
    argv: list[str], line: str, tmp_path, monkeypatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["experiment", *argv]) == 2
    out = capsys.readouterr()
    assert out.err.splitlines() == [f"maxminq experiment: error: {line}"]
    assert out.out == "" and list(tmp_path.iterdir()) == []


def test_a_mistyped_option_before_the_sub_command_is_still_told_its_spelling(capsys) -> None:
    with pytest.raises(SystemExit) as info:  # argparse's own error, as before
        main(["experiment", "--quik", "toy-mdp"])
    assert info.value.code == 2
    assert capsys.readouterr().err.splitlines() == [
        "maxminq experiment: error: unrecognized arguments: --quik (did you mean --quick?)"
    ]
