"""A sweep config's slips told in one line: misspelt keys and config names, missing keys,
variants lacking a parameter, counts written as floats, settings the run id leaves out."""

from __future__ import annotations

from pathlib import Path

import pytest
from sweep_configs import MC
from sweep_configs import TOY_NAMED_SCALED as OWN

from maxminq.cli import main
from maxminq.experiments.config import ConfigError, config_from_document, load_config

DEEP = """
name: ck
kind: deep
fixed: {env_id: CartPole-v1, agent: dqn, steps: 300, seeds: [0], learning_starts: 40,
        eval_episodes: 2, lr: 0.001}
scales: {quick: {}}
"""


@pytest.mark.parametrize(
    ("edit", "where", "meant"),
    [
        (("fixed: {{seed", "fixd: {{seed"), "fixd: unknown key", "fixed"),
        (("scales:", "scale:"), "scale: unknown key", "scales"),
        (("runs: 3", "run: 3"), "fixed.run: unknown setting", "runs"),
        (
            ("algorithm: q_learning", "algoritm: q_learning"),
            "fixed.algoritm: unknown setting",
            "algorithm",
        ),  # fmt: skip
    ],
)
def test_a_misspelt_key_says_what_it_likely_meant(tmp_path, edit, where, meant) -> None:
    """Before: the key and the list of every allowed one (17 for a toy MDP run), without
    the likely one."""
    path = tmp_path / "c.yaml"
    path.write_text(OWN.replace(*edit).format(name="c", scale="quick"))
    with pytest.raises(ConfigError) as info:
        load_config(path, "quick")
    message = str(info.value)
    assert message.startswith(f"{path}: {where}; expected one of ")
    assert message.endswith(f"; did you mean {meant}?")


def test_a_deep_setting_misspelt_says_what_it_likely_meant(tmp_path) -> None:
    """The deep settings (TrainConfig's fields) too."""
    path = tmp_path / "d.yaml"
    path.write_text(
        "name: d\nkind: deep\nfixed: {env_id: CartPole-v1, agent: dqn, steps: 300, "
        "seeds: [0], eval_episode: 2}\nscales: {quick: {}}\n"
    )
    with pytest.raises(ConfigError) as info:
        load_config(path, "quick")
    message = str(info.value)
    assert message.startswith(f"{path}: fixed.eval_episode: unknown setting; expected one of ")
    assert message.endswith("; did you mean eval_episodes?")


def test_a_variant_without_its_operators_parameter_is_named(tmp_path) -> None:
    """Before: 'fixed.op_kwargs: bias_corrected needs
    sigma (e.g. bias_corrected:sigma=1; config: op_kwargs: {sigma: 1}); with sigma = 0 it is
    q_learning (required setting missing)'."""
    path = tmp_path / "bc.yaml"
    path.write_text(
        "name: bc\nkind: toy_mdp\nfixed: {seed: 0, runs: 2, episodes: 3, mu: 0.1}\n"
        "variants:\n  - {algorithm: q_learning, n: 1}\n  - {algorithm: bias_corrected, n: 1}\n"
        "scales: {quick: {}}\n"
    )
    with pytest.raises(ConfigError) as info:
        load_config(path, "quick")
    assert str(info.value) == (
        f"{path}: variants[1].op_kwargs: bias_corrected needs sigma (e.g. op_kwargs: "
        "{sigma: 1}); with sigma = 0 it is q_learning"
    )


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("--episodes", "1e3", "--episodes: expected a whole number >= 1, got '1e3' (write 1000)"),
        ("--runs", "2.5", "--runs: expected a whole number >= 1, got '2.5'"),
        ("--seed", "7.0", "--seed: expected a whole number >= 0, got '7.0' (write 7)"),
        ("--runs", "0.0", "--runs: expected a whole number >= 1, got '0.0'"),  # no '(write 0)'
    ],
)
def test_a_count_written_as_a_float_is_told_how_to_write_it(
    tmp_path, capsys, option, value, said
) -> None:
    argv = ["experiment", "toy-mdp", "--quick", option, value, "--out", str(tmp_path / "o")]
    assert main(argv) == 2
    assert capsys.readouterr().err == f"maxminq experiment: error: {said}\n"
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("key", "said"),
    [
        (
            "kind",
            "kind: missing required key; give the run kind, one of deep, mountain_car, toy_mdp",
        ),  # fmt: skip
        (
            "scales",
            "scales: missing required key; give at least one scale (--scale picks "
            "one; quick is its default), e.g. scales: {quick: {}}",
        ),  # fmt: skip
        ("name", "name: missing required key; give the config a name"),
    ],
)
def test_a_missing_key_is_told_what_to_write(key: str, said: str) -> None:
    doc = {k: v for k, v in MC.items() if k != key}
    with pytest.raises(ConfigError) as err:
        config_from_document(doc, "my.yaml", "tiny")
    assert str(err.value).startswith(f"my.yaml: {said}")
    assert "\n" not in str(err.value)


def test_a_variant_lacking_what_the_others_give_is_named() -> None:
    doc = {**MC, "variants": [{"algorithm": "q_learning"}, {"algorithm": "maxmin", "n": [2, 4]}]}
    with pytest.raises(ConfigError) as err:
        config_from_document(doc, "my.yaml", "tiny")
    assert str(err.value) == (
        "my.yaml: variants[0].n: required setting missing (other variants give it; give it "
        "here too, or in fixed for all)"
    )
    # missing everywhere: the place that gives it to all, as before
    doc = {**MC, "fixed": {k: v for k, v in MC["fixed"].items() if k != "seed"}}
    with pytest.raises(ConfigError, match=r"^my.yaml: fixed.seed: required setting missing$"):
        config_from_document(doc, "my.yaml", "tiny")


def test_a_shipped_config_named_outside_the_checkout_is_pointed_to(tmp_path, monkeypatch, capsys):
    """`maxminq sweep configs/toy_mdp.yaml` in a folder of one's own (as docs/sweeps.md shows
    it, from the checkout) said only "no such file": now it names the shipped file and the
    command that runs it from anywhere; a name maxminq does not ship keeps the bare error."""
    from maxminq.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["sweep", "configs/toy_mdp.yaml", "--dry-run"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "reproduce --only toy_mdp" in err
    shipped = Path(err.rsplit(", ", 1)[1])
    assert shipped.name == "toy_mdp.yaml" and shipped.is_file()
    assert main(["sweep", "my_grid.yaml"]) == 2
    assert capsys.readouterr().err.strip().endswith("my_grid.yaml: no such file")
    assert not any(tmp_path.iterdir())  # nothing written


def test_a_grid_over_checkpoint_every_alone_says_the_run_id_leaves_it_out(tmp_path) -> None:
    """Before: 'grid: makes the same run as another of its combinations
    ({checkpoint_every: 200}, ...); give each run once', for runs that differ in it."""
    path = tmp_path / "grid.yaml"
    path.write_text(DEEP + "grid: {checkpoint_every: [100, 200]}\n")
    with pytest.raises(ConfigError) as info:
        load_config(path, "quick")
    assert str(info.value) == (
        f"{path}: grid.checkpoint_every: makes the same run as another of its combinations "
        "({checkpoint_every: 200}, with the defaults filled in): checkpoint_every cannot "
        "change a run's results, so its run id leaves it out; give it one value for all runs "
        "(in fixed)"
    )


def test_variants_that_differ_only_in_tensorboard_name_it(tmp_path) -> None:
    """A variant asking for TensorBoard logs beside the same run without them."""
    path = tmp_path / "tb.yaml"
    path.write_text(DEEP + "variants: [{tensorboard: true, n: 1}, {n: 1}]\n")
    with pytest.raises(ConfigError) as info:
        load_config(path, "quick")
    message = str(info.value)
    assert message.startswith(f"{path}: variants[1]: makes the same run as variants[0] ")
    assert "tensorboard cannot change a run's results, so its run id leaves it out" in message
    assert "\n" not in message


def test_a_slip_in_a_config_name_gets_a_guess(tmp_path, monkeypatch, capsys) -> None:
    """'maxminq sweep catchr' and 'sweep configs/my_gird.yaml' said only 'no such file';
    'reproduce --only catchr' listed every name without saying which was meant."""
    own = tmp_path / "own"
    (own / "configs").mkdir(parents=True)
    (own / "configs" / "my_grid.yaml").write_text("name: my_grid\n")
    monkeypatch.chdir(own)
    assert main(["sweep", "configs/my_gird.yaml", "--dry-run"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "maxminq sweep: error: configs/my_gird.yaml: no such file (did you mean "
        "configs/my_grid.yaml?)"
    ]
    bare = tmp_path / "bare"  # no ./configs: the shipped configs are the ones meant
    bare.mkdir()
    monkeypatch.chdir(bare)
    assert main(["sweep", "catchr", "--dry-run"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "maxminq sweep: error: catchr: no such file (did you mean the shipped config 'catcher'? "
        "'maxminq reproduce --only catcher' runs it)"
    ]
    assert main(["reproduce", "--only", "catchr,zzz", "--out", str(bare / "out")]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(
        "maxminq reproduce: error: --only: unknown name(s) catchr (did you mean catcher?), zzz; "
        "expected comma-separated names from: asterix_varying_n, catcher, "
    ), line
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["bare", "configs", "my_grid.yaml", "own"]


def test_a_grid_algorithm_without_its_parameter_is_told_to_be_a_variant(tmp_path) -> None:
    """The advice, followed, loads; 'grid.op_kwargs: [{sigma: 1}]' (the advice before)
    fails on q_learning."""
    head = "name: g\nkind: toy_mdp\nfixed: {seed: 0, runs: 3, episodes: 4, n: 1, mu: 0.1}\n"
    tail = "scales: {quick: {}}\n"
    path = tmp_path / "g.yaml"
    path.write_text(head + "grid: {algorithm: [q_learning, bias_corrected]}\n" + tail)
    with pytest.raises(ConfigError) as err:
        load_config(path, "quick")
    assert str(err.value) == (
        f"{path}: grid.algorithm: bias_corrected needs sigma (e.g. op_kwargs: {{sigma: 1}}); "
        "with sigma = 0 it is q_learning; an op_kwargs beside this axis would go to its other "
        "algorithms too: give each algorithm as a variant instead, e.g. variants: "
        "[{algorithm: q_learning}, {algorithm: bias_corrected, op_kwargs: {sigma: 1}}]"
    )
    advice = str(err.value).rpartition("variants: ")[2]
    path.write_text(head + f"variants: {advice}\n" + tail)
    assert [r.settings["algorithm"] for r in load_config(path, "quick").runs] == [
        "q_learning",
        "bias_corrected",
    ]
    before = "grid: {algorithm: [q_learning, bias_corrected], op_kwargs: [{sigma: 1}]}\n"
    path.write_text(head + before + tail)
    with pytest.raises(ConfigError, match="q_learning takes no parameters"):
        load_config(path, "quick")
