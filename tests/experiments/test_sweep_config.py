"""Sweep config loading: shipped configs, expansion, stable run ids, one-line errors, fuzz."""

from __future__ import annotations

import contextlib
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from docs_text import section
from helpers import REPO
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sweep_configs import TOY_OWN_QUICK as OWN

from maxminq.experiments.config import (
    MAX_NODES,
    ConfigError,
    config_from_document,
    expanded_size,
    load_config,
    parse_document,
)

ROOT = REPO


CONFIGS = ROOT / "configs"


PAPER_FIGURES = {
    "toy_mdp",
    "mountain_car",
    "lunarlander",
    "catcher",
    "pixelcopter",
    "minatar_asterix",
    "minatar_seaquest",
    "minatar_breakout",
    "minatar_space_invaders",
    "pixelcopter_varying_n",
    "asterix_varying_n",
}


TOY = """
name: tiny
kind: toy_mdp
fixed: {seed: 3, episodes: 5}
grid: {mu: [0.1, -0.1]}
variants:
  - {algorithm: q_learning, n: 1}
  - {algorithm: maxmin, n: [2, 4]}
scales:
  quick: {fixed: {runs: 4}}
  paper: {fixed: {runs: 40}}
"""


def _write(tmp_path: Path, text: str, name: str = "c.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


DEEP = """
name: d
kind: deep
fixed: {env_id: CartPole-v1, steps: 100, seeds: [0, 1]}
variants: [{agent: dqn, n: 1, lr: 1.0e-4}]
scales: {quick: {}, paper: {}}
"""


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
)


_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


_keys = st.sampled_from(
    ["name", "kind", "fixed", "grid", "variants", "scales", "figure", "quick", "paper", "mu",
     "runs", "n", "algorithm", "episodes", "seed", "env_id", "agent", "lr", "seeds", "x"]
)  # fmt: skip


_docs = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(_keys | st.text(max_size=4), inner, max_size=5)
    ),
    max_leaves=25,
)


def _skeleton(draw_kind: str, fixed, grid, variants, quick):
    return {
        "name": "fuzz",
        "kind": draw_kind,
        "fixed": fixed,
        "grid": grid,
        "variants": variants,
        "scales": {"quick": quick, "paper": {}},
    }


MC = """
name: mc
kind: mountain_car
fixed: {seed: 0, episodes: 3, runs: 2, sigma2: 10, step_size: 0.02}
variants:
  - {algorithm: q_learning, n: 1}
  - {algorithm: maxmin, n: 2}
scales:
  quick: {}
  paper: {}
"""


def _laughs(levels: int, width: int = 9) -> list[str]:
    """Lines of nested anchors: level k holds ``width`` aliases of level k - 1."""
    lines = [f"  x0: &a0 [{', '.join(['lol'] * width)}]"]
    for k in range(1, levels):
        lines.append(f"  x{k}: &a{k} [{', '.join([f'*a{k - 1}'] * width)}]")
    return lines


BOMBS = {
    # a setting, a name (its error message printed the value), a grid axis, merge keys
    "fixed": "name: b\nkind: toy_mdp\nfixed:\n{laughs}\nscales: {{quick: {{}}}}\n",
    "name": "kind: toy_mdp\nfixed:\n{laughs}\nname: *a8\nscales: {{quick: {{}}}}\n",
    "grid": "name: b\nkind: toy_mdp\nfixed:\n{laughs}\ngrid:\n  mu: *a8\nscales: {{quick: {{}}}}\n",
}


MERGES = "\n".join(
    ["  m0: &m0 {k0: 1, k1: 2}"]
    + [f"  m{i}: &m{i} {{<<: [*m{i - 1}, *m{i - 1}], z{i}: 1}}" for i in range(1, 30)]
)


def test_a_config_of_ones_own_needs_any_one_scale(tmp_path, capsys):
    # Only maxminq reproduce needs quick and paper (of the shipped configs); a user's own
    # sweep may have one scale of any name, and asking for another names the ones it has.
    text = TOY.replace("  quick: {fixed: {runs: 4}}\n  paper: {fixed: {runs: 40}}", "  main: {}")
    path = _write(tmp_path, text.replace("episodes: 5}", "episodes: 5, runs: 6}"))
    config = load_config(path, "main")
    assert len(config.runs) == 6 and {r.settings["runs"] for r in config.runs} == {6}
    with pytest.raises(ConfigError, match="no scale 'quick'; expected one of main"):
        load_config(path, "quick")
    # `maxminq sweep` asks for `quick` unless told: the one line says which option picks it.
    from maxminq.cli import main

    assert main(["sweep", str(path), "--out", str(tmp_path / "out"), "--dry-run"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].endswith("expected one of main (--scale)"), err
    assert main(["sweep", str(path), "--out", str(tmp_path / "out"), "--scale", "main",
                 "--dry-run"]) == 0  # fmt: skip


def test_every_paper_figure_has_a_config_that_loads_at_both_scales():
    names = {p.stem for p in CONFIGS.glob("*.yaml")}
    assert names >= PAPER_FIGURES
    for path in sorted(CONFIGS.glob("*.yaml")):
        for scale in ("quick", "paper"):
            config = load_config(path, scale)
            assert config.name == path.stem
            runs = config.runs
            assert runs and len({r.run_id for r in runs}) == len(runs)


def test_shipped_grid_sizes_match_the_paper():
    # toy MDP: 2 mu x (Q, Double Q, Maxmin N = 2, 4, 6, 8) = 12 settings, 5,000 runs each.
    toy = load_config(CONFIGS / "toy_mdp.yaml", "paper")
    assert len(toy.runs) == 12
    assert {r.settings["runs"] for r in toy.runs} == {5000}
    assert sorted({r.settings["n"] for r in toy.runs if r.settings["algorithm"] == "maxmin"}) == [
        2,
        4,
        6,
        8,
    ]
    # Mountain Car: 4 sigma^2 x 5 step sizes x (Q, Double Q, Averaged K and Maxmin N in
    # {2, 4, 6, 8}), 100 runs x 1,000 episodes each.
    mc = load_config(CONFIGS / "mountain_car.yaml", "paper")
    assert len(mc.runs) == 4 * 5 * (1 + 1 + 4 + 4)
    assert {(r.settings["runs"], r.settings["episodes"]) for r in mc.runs} == {(100, 1000)}
    assert {r.settings["sigma2"] for r in mc.runs} == {0.0, 1.0, 10.0, 50.0}
    assert {r.settings["step_size"] for r in mc.runs} == {0.005, 0.01, 0.02, 0.04, 0.08}


def test_varying_n_paper_runs_are_shared_with_the_full_sweep():
    full = {r.run_id for r in load_config(CONFIGS / "pixelcopter.yaml", "paper").runs}
    varying = {r.run_id for r in load_config(CONFIGS / "pixelcopter_varying_n.yaml", "paper").runs}
    assert varying and varying <= full


def test_expansion_union_of_products_and_scale_overlay(tmp_path):
    config = load_config(_write(tmp_path, TOY), "quick")
    combos = sorted(
        (r.settings["mu"], r.settings["algorithm"], r.settings["n"]) for r in config.runs
    )
    expected = sorted(
        (mu, alg, n)
        for mu in (0.1, -0.1)
        for alg, n in (("q_learning", 1), ("maxmin", 2), ("maxmin", 4))
    )
    assert combos == expected
    assert {r.settings["runs"] for r in config.runs} == {4}
    assert {r.settings["runs"] for r in load_config(tmp_path / "c.yaml", "paper").runs} == {40}
    # A scale may turn a fixed setting into an axis.
    text = TOY.replace(
        "quick: {fixed: {runs: 4}}", "quick: {fixed: {runs: 4}, grid: {seed: [1, 2]}}"
    )
    assert len(load_config(_write(tmp_path, text, "d.yaml"), "quick").runs) == 12


def test_run_ids_depend_on_settings_not_on_order_or_spelling(tmp_path):
    base = {r.run_id: r.settings for r in load_config(_write(tmp_path, TOY), "quick").runs}
    reordered = (
        TOY.replace("[0.1, -0.1]", "[-0.1, 1.0e-1]")
        .replace("  - {algorithm: q_learning, n: 1}\n", "")
        .replace("n: [2, 4]}", "n: [4, 2]}\n  - {n: 1, algorithm: q_learning}")
    )
    again = {r.run_id: r.settings for r in load_config(_write(tmp_path, reordered, "r.yaml")).runs}
    assert again == base
    # The id is sha256 over the canonical JSON of kind and settings (independent recomputation).
    for run_id, run_settings in base.items():
        text = json.dumps(
            {"kind": "toy_mdp", "settings": run_settings}, sort_keys=True, separators=(",", ":")
        )
        assert run_id == "toy_mdp-" + hashlib.sha256(text.encode()).hexdigest()[:12]
    changed = {
        r.run_id
        for r in load_config(_write(tmp_path, TOY.replace("seed: 3", "seed: 4"), "s.yaml")).runs
    }
    assert not changed & set(base)


def test_yaml_12_floats_and_duplicate_keys():
    assert parse_document("lr: 3e-4")["lr"] == pytest.approx(3e-4)
    assert isinstance(parse_document("x: 1e6")["x"], float)
    with pytest.raises(ConfigError, match="duplicate key 'a'"):
        parse_document("a: 1\na: 2\n")


@pytest.mark.parametrize(
    ("edit", "where", "expect"),
    [
        (("runs: 4", "runs: -4"), "scales.quick.fixed.runs", "greater than or equal to 1"),
        (("n: [2, 4]", "n: [2, 0]"), "variants[1].n", "greater than or equal to 1"),
        (("algorithm: maxmin", "algorithm: maxi"), "variants[1].algorithm", "unknown algorithm"),
        (("kind: toy_mdp", "kind: toys"), "kind", "expected one of"),
        (("mu: [0.1, -0.1]", "mu: []"), "grid.mu", "non-empty list"),
        (("mu: [0.1, -0.1]", "mu: [0.1, x]"), "grid.mu", "expected a number, got 'x'"),
        (("seed: 3,", ""), "fixed.seed", "required setting missing"),
        (("seed: 3,", "sed: 3,"), "fixed.sed", "unknown setting"),  # the typo, named
        (("episodes: 5}", "episodes: 5, stepsize: 1}"), "fixed.stepsize", "unknown setting"),
        (
            ("  quick: {fixed: {runs: 4}}\n  paper: {fixed: {runs: 40}}", "  {}"),
            "scales",
            "at least one scale",
        ),
        (("name: tiny", "name: 'a b'"), "name", "expected letters"),
        (("fixed: {", "fixd: {"), "fixd", "unknown key"),
        (("grid: {mu: [0.1, -0.1]}", "grid: {mu: [0.1, -0.1]"), "line", "invalid YAML"),
        # values only the run function knows to be bad are caught when the config loads too
        (("episodes: 5}", "episodes: 5, batch_size: 0}"), "fixed.batch_size", "whole number"),
        (("episodes: 5}", "episodes: 5, epsilon: 2}"), "fixed.epsilon", "in [0, 1]"),
    ],
)
def test_config_errors_name_file_key_and_expectation(tmp_path, edit, where, expect):
    path = _write(tmp_path, TOY.replace(*edit))
    with pytest.raises(ConfigError) as info:
        load_config(path, "quick")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: {where}")
    assert expect in message


def test_deep_settings_are_validated_by_the_training_config(tmp_path):
    text = """
name: d
kind: deep
fixed: {env_id: maxminq/Catcher-v0, steps: 100, seeds: [0, 1]}
variants: [{agent: dqn, n: 1, lr: 1.0e-4}, {agent: maxmin-dqn, n: 3, lr: -1}]
scales: {quick: {}, paper: {}}
"""
    with pytest.raises(ConfigError) as info:
        load_config(_write(tmp_path, text), "quick")
    assert str(info.value).endswith("c.yaml: variants[1].lr: must be a finite number > 0, got -1")
    with pytest.raises(ConfigError, match=r"fixed\.env_id: unknown environment"):
        load_config(_write(tmp_path, text.replace("Catcher", "Catch"), "e.yaml"), "quick")
    # a missing required setting is named like any other key (was "settings: TrainConfig.
    # __init__() missing 1 required positional argument: 'env_id'")
    path = _write(tmp_path, text.replace("env_id: maxminq/Catcher-v0, ", ""), "m.yaml")
    with pytest.raises(ConfigError) as info:
        load_config(path, "quick")
    assert str(info.value) == f"{path}: fixed.env_id: required setting missing"
    ok = load_config(_write(tmp_path, text.replace("lr: -1", "lr: 3e-4"), "o.yaml"), "quick")
    # Stored settings are the resolved training config: defaults filled in from the registry.
    assert all(r.settings["batch_size"] == 32 and r.settings["steps"] == 100 for r in ok.runs)


@pytest.mark.parametrize(
    ("text", "edit", "where", "expect", "value"),
    [
        # a wrong type used to surface as "settings: must be real number, not str"
        (DEEP, ("lr: 1.0e-4", "lr: abc"), "variants[0].lr", "expected a number", "'abc'"),
        (DEEP, ("n: 1,", "n: abc,"), "variants[0].n", "expected an integer", "'abc'"),
        (DEEP, ("steps: 100", "steps: yes"), "fixed.steps", "expected an integer", "True"),
        # the training config's own checks speak of --steps and add the value themselves
        (DEEP, ("lr: 1.0e-4", "lr: 1.0e-4, steps: 0"), "variants[0].steps", "must be >= 1", "0"),
        (DEEP, ("n: 1,", "n: 1, batch_size: -3,"), "variants[0].batch_size", ">= 1", "-3"),
        (DEEP, ("agent: dqn", "agent: foo"), "variants[0].agent", "unknown agent", "'foo'"),
        # the example in YAML, not in --seeds syntax ("e.g. 0-4")
        (DEEP, ("seeds: [0, 1]", "seeds: []"), "fixed.seeds",
         "give at least one seed, e.g. [0, 1, 2, 3, 4]", "[]"),
        (DEEP, ("steps: 100", "steps: 100, update_members: 3"), "fixed.update_members",
         "so it must be 1", "3"),
        # tabular settings that only the run function knows: typed by their default
        (TOY, ("episodes: 5}", "episodes: 5, step_size: abc}"), "fixed.step_size",
         "expected a number", "'abc'"),
        (TOY, ("algorithm: maxmin", "algorithm: maxi"), "variants[1].algorithm",
         "unknown algorithm", "'maxi'"),
    ],
)  # fmt: skip
def test_config_errors_name_the_key_path_and_the_value_once(
    tmp_path, text, edit, where, expect, value
):
    assert edit[0] in text
    path = _write(tmp_path, text.replace(*edit))
    with pytest.raises(ConfigError) as info:
        load_config(path, "quick")
    message = str(info.value)
    assert message.startswith(f"{path}: {where}: ") and expect in message, message
    said = message.split(f"{where}: ", 1)[1]  # what follows the key path
    assert message.count(where) == 1 and said.count(value) == 1, message
    assert message.count(", got ") <= 1 and "--" not in message, message


def test_cli_reports_config_errors_in_one_line_before_any_run(tmp_path):
    path = _write(tmp_path, TOY.replace("runs: 4", "runs: 0"))
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "maxminq.cli", "sweep", str(path), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "scales.quick.fixed.runs" in lines[0] and str(path) in lines[0]
    assert not out.exists()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.text(max_size=200))
def test_fuzz_random_text_raises_only_config_error(text):
    try:
        doc = parse_document(text, "fuzz.yaml")
        config_from_document(doc, "fuzz.yaml", "quick")
    except ConfigError as err:
        assert "\n" not in str(err) and str(err).startswith("fuzz.yaml")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=_docs)
def test_fuzz_random_documents_raise_only_config_error(doc):
    try:
        config_from_document(doc, "fuzz.yaml", "quick")
    except ConfigError as err:
        assert "\n" not in str(err)
    # The same document through YAML text (anything yaml can dump).
    try:
        text = yaml.safe_dump(doc)
    except yaml.YAMLError:
        return
    with contextlib.suppress(ConfigError):
        config_from_document(parse_document(text, "fuzz.yaml"), "fuzz.yaml", "quick")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(["toy_mdp", "mountain_car", "deep"]),
    fixed=st.dictionaries(_keys, _values, max_size=6),
    grid=st.dictionaries(_keys, st.lists(_values, max_size=3) | _values, max_size=3),
    variants=st.lists(st.dictionaries(_keys, _values, max_size=3), max_size=3) | _values,
    quick=st.dictionaries(st.sampled_from(["fixed", "grid", "variants", "x"]), _values, max_size=2),
)
def test_fuzz_near_valid_configs_raise_only_config_error(kind, fixed, grid, variants, quick):
    doc = _skeleton(kind, fixed, grid, variants, quick)
    try:
        config = config_from_document(doc, "fuzz.yaml", "quick")
    except ConfigError as err:
        assert "\n" not in str(err) and str(err).startswith("fuzz.yaml: ")
    else:
        assert all(r.run_id.startswith(kind + "-") for r in config.runs)


def test_readme_example_is_the_shipped_toy_mdp_config():
    text = section("sweeps", "Sweeps and results store")
    block = text.split("```yaml\n", 1)[1].split("```", 1)[0]
    documented = config_from_document(parse_document(block), "docs/sweeps.md", "quick")
    shipped = load_config(CONFIGS / "toy_mdp.yaml", "quick")
    assert [r.run_id for r in documented.runs] == [r.run_id for r in shipped.runs]
    paper = config_from_document(parse_document(block), "docs/sweeps.md", "paper")
    assert [r.run_id for r in paper.runs] == [
        r.run_id for r in load_config(CONFIGS / "toy_mdp.yaml", "paper").runs
    ]


def test_mountain_car_values_are_checked_when_the_config_loads(tmp_path):
    text = (CONFIGS / "mountain_car.yaml").read_text()
    for edit, where, expect in (
        (("step_size_per: tiling", "step_size_per: weight"), "fixed.step_size_per", "tiling"),
        (("max_steps: 5000", "max_steps: 0"), "fixed.max_steps", "whole number >= 1"),
    ):
        assert edit[0] in text
        path = _write(tmp_path, text.replace(*edit), "mc.yaml")
        with pytest.raises(ConfigError) as info:
            load_config(path, "quick")
        assert str(info.value).startswith(f"{path}: {where}") and expect in str(info.value)


def test_configs_ship_inside_the_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The sweep configs live in the package (``configs/`` at the top is a link to them), and
    pyproject's package data takes them into a wheel, so ``maxminq reproduce`` finds them
    from any folder when maxminq is pip-installed rather than checked out."""
    import maxminq
    from maxminq.commands.reproduce import find_configs_dir

    package = Path(maxminq.__file__).resolve().parent
    shipped = sorted(p.name for p in (package / "configs").glob("*.yaml"))
    assert shipped == sorted(p.name for p in CONFIGS.glob("*.yaml")) and len(shipped) >= 11
    pyproject = (ROOT / "pyproject.toml").read_text()  # (tomllib is Python 3.11+)
    package_data = pyproject.split("[tool.setuptools.package-data]")[1].split("\n[")[0]
    assert '"configs/*.yaml"' in package_data
    monkeypatch.chdir(tmp_path)  # no ./configs here
    found = find_configs_dir(None)
    assert sorted(p.name for p in found.glob("*.yaml")) == shipped


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        (("runs: 4", "runs: true"), "scales.quick.fixed.runs"),
        (("runs: 4", "runs: yes"), "scales.quick.fixed.runs"),  # YAML 1.1: yes is true
        (("episodes: 5", "episodes: on"), "fixed.episodes"),
    ],
)
def test_a_boolean_is_not_taken_for_a_number(tmp_path, edit, where):
    """The toy kind's checks took true as 1: 'runs: yes' silently ran one run."""
    path = _write(tmp_path, TOY.replace(*edit))
    with pytest.raises(ConfigError) as info:
        load_config(path, "quick")
    assert str(info.value) == f"{path}: {where}: expected a number, got True"


def test_a_folder_or_an_unknown_key_in_one_plain_line(tmp_path):
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path, "quick")
    assert str(info.value) == f"{tmp_path}: is a folder; expected a YAML config file"
    path = _write(tmp_path, TOY.replace("episodes: 5}", "episodes: 5, stepsize: 0.5}"))
    with pytest.raises(ConfigError) as info:
        load_config(path, "quick")
    # the value of a misspelt key is not what is wrong: not appended
    assert str(info.value).startswith(f"{path}: fixed.stepsize: unknown setting; expected one of")
    # every key a toy setting takes, those without a default (op_kwargs, update_members) too
    assert str(info.value).endswith(", update_every, update_members; did you mean step_size?")
    assert "op_kwargs, " in str(info.value)


@pytest.mark.parametrize(
    ("edit", "where", "value"),
    [
        (("mu: [0.1, -0.1]", "mu: [0.1, 0.1]"), "grid.mu[1]", "0.1"),
        (("n: [2, 4]", "n: [4, 2, 4]"), "variants[1].n[2]", "4"),
    ],
)
def test_a_value_repeated_in_an_axis_is_an_error(tmp_path, edit, where, value):
    """The repeat was merged away in silence: 'mu: [0.1, 0.1]' (meant: [0.1, -0.1]) ran
    half the sweep."""
    path = _write(tmp_path, TOY.replace(*edit))
    with pytest.raises(ConfigError) as info:
        load_config(path, "quick")
    assert str(info.value) == f"{path}: {where}: {value} is given twice; give each once"


@pytest.mark.parametrize(
    ("text", "old", "plain", "spelt"),
    [
        (TOY, "episodes: 5}", "episodes: 5, epsilon: 0.0}", "episodes: 5, gamma: 1, epsilon: 0}"),
        (TOY, "n: [2, 4]}", "n: [2, 4]}", "n: [2, 4], update_members: 1}"),
        (TOY, "n: [2, 4]}", "n: [2, 4]}", "n: [2, 4], op_kwargs: {}}"),
        (MC, "step_size: 0.02}", "step_size: 0.02}", "step_size: 0.02, gamma: 1, init_weight: 0}"),
        (MC, "maxmin, n: 2}", "maxmin, n: 2}", "maxmin, n: 2, update_members: 1}"),
    ],
)
def test_the_same_run_spelt_another_way_keeps_its_id(tmp_path, text, old, plain, spelt):
    """'gamma: 1' for the default 1.0, 'update_members: 1' or 'op_kwargs: {}' (the defaults)
    gave new run ids: the same runs trained again and then pooled in the report as two
    experiments ('update_members 1 vs null', the same seeds counted twice)."""
    assert old in text
    a = load_config(_write(tmp_path, text.replace(old, plain), "a.yaml"), "quick").runs
    b = load_config(_write(tmp_path, text.replace(old, spelt), "b.yaml"), "quick").runs
    assert sorted(r.run_id for r in a) == sorted(r.run_id for r in b)
    assert all("update_members" not in r.settings and "op_kwargs" not in r.settings for r in b)


def test_operator_parameters_are_one_spelling_and_other_values_other_runs(tmp_path):
    text = TOY.replace(
        "  - {algorithm: q_learning, n: 1}\n",
        "  - {algorithm: bias_corrected, n: 1, op_kwargs: {sigma: SIGMA}}\n",
    ).replace("n: [2, 4]}", "n: [2, 4], update_members: U}")
    ids = {}
    for sigma, u in (("1", "2"), ("1.0", "2"), ("0.5", "2"), ("1", "1")):
        path = _write(tmp_path, text.replace("SIGMA", sigma).replace("U", u), "x.yaml")
        ids[sigma, u] = {r.run_id for r in load_config(path, "quick").runs}
        assert len(ids[sigma, u]) == 6
    assert ids["1", "2"] == ids["1.0", "2"]
    assert len(ids["1", "2"] & ids["0.5", "2"]) == 4  # the maxmin runs only
    assert len(ids["1", "2"] & ids["1", "1"]) == 2  # the bias-corrected runs only
    stored = [
        r.settings["op_kwargs"]
        for r in load_config(path, "quick").runs
        if "op_kwargs" in r.settings
    ]
    assert stored == [{"sigma": 1.0}] * 2 and all(type(v["sigma"]) is float for v in stored)


def test_two_variants_making_the_same_run_is_an_error(tmp_path):
    """Two variants that make the same run (the same one twice, or one that sets a value
    equal to the default the other leaves out) were merged in silence: the sweep ran fewer
    runs than the config lists."""
    path = _write(
        tmp_path, TOY.replace("- {algorithm: maxmin, n: [2, 4]}", "- {algorithm: q_learning, n: 1}")
    )
    with pytest.raises(ConfigError) as info:
        load_config(path, "quick")
    assert str(info.value) == (
        f"{path}: variants[1]: makes the same run as variants[0] "
        "({mu: 0.1, algorithm: 'q_learning', n: 1}, with the defaults filled in); "
        "give each run once"
    )
    # gamma 1.0 is the toy MDP's default: the second variant is the first one again
    text = TOY.replace(
        "- {algorithm: maxmin, n: [2, 4]}", "- {algorithm: q_learning, n: 1, gamma: 1.0}"
    )
    with pytest.raises(ConfigError, match=r"variants\[1\]: makes the same run as variants\[0\]"):
        load_config(_write(tmp_path, text, "d.yaml"), "quick")


def test_an_empty_list_inside_a_variant_names_its_key(tmp_path):
    path = _write(tmp_path, TOY.replace("n: [2, 4]", "n: []"))
    with pytest.raises(ConfigError) as info:
        load_config(path, "quick")
    assert str(info.value) == f"{path}: variants[1].n: expected a value or a non-empty list, got []"


def test_a_misspelt_required_setting_is_named_not_reported_missing(tmp_path):
    """'algoritm: maxmin' was reported as 'fixed.algorithm: required setting missing',
    a line that never named the typo."""
    path = _write(tmp_path, TOY.replace("fixed: {seed: 3,", "fixed: {sed: 3,"))
    with pytest.raises(ConfigError) as info:
        load_config(path, "quick")
    assert str(info.value).startswith(f"{path}: fixed.sed: unknown setting; expected one of")
    text = TOY.replace("{algorithm: q_learning, n: 1}", "{algoritm: q_learning, n: 1}")
    with pytest.raises(ConfigError, match=r": variants\[0\]\.algoritm: unknown setting;"):
        load_config(_write(tmp_path, text, "b.yaml"), "quick")


def test_a_long_axis_repeat_is_found_quickly(tmp_path):
    """Repeats in an axis were found by comparing every pair: 1.1 s for 3,000 seeds, 30 s
    for 15,000. A 20,000-value axis with its repeat at the end is found, and fast."""
    import time

    seeds = list(range(20_000)) + [7]
    doc = yaml.safe_load(TOY)
    doc["grid"]["seed"] = seeds
    start = time.perf_counter()
    with pytest.raises(ConfigError) as info:
        config_from_document(doc, "c.yaml", "quick")
    assert time.perf_counter() - start < 5.0  # pairwise: about 2e8 comparisons, minutes
    assert str(info.value) == "c.yaml: grid.seed[20000]: 7 is given twice; give each once"
    # 1.0 repeats 1, as Python compares them (a set of values finds that too)
    doc["grid"] = {"mu": [0.1], "gamma": [1, 1.0]}
    with pytest.raises(ConfigError, match=r"grid\.gamma\[1\]: 1\.0 is given twice"):
        config_from_document(doc, "c.yaml", "quick")


def test_a_trailing_newline_is_no_part_of_a_name_or_key(tmp_path):
    """Names and keys were matched with a pattern ending in '$', which also matches before
    a final newline: a config named "toy\\n" was accepted (results/toy<newline>), and a
    key 'A\\n' inside a mapping put a newline into the one-line error."""
    doc = yaml.safe_load(TOY)
    with pytest.raises(ConfigError) as info:
        config_from_document({**doc, "name": "toy\n"}, "c.yaml", "quick")
    assert str(info.value) == "c.yaml: name: expected letters, digits, '_', '.', '-', got 'toy\\n'"
    doc["fixed"]["op_kwargs"] = [[{"A\n": []}]]  # nested too deep: an error below the key
    with pytest.raises(ConfigError) as info:
        config_from_document(doc, "c.yaml", "quick")
    assert str(info.value) == (
        "c.yaml: fixed.op_kwargs[0][0]['A\\n']: expected a number, string, boolean, list or "
        "mapping, got []"
    )


def test_a_variant_overriding_a_grid_axis_is_no_repeat(tmp_path):
    """A variant's key overrides the grid's (README): the grid's values of that key give the
    variant's run once, on purpose, and are not reported as the same run made twice."""
    text = TOY.replace("q_learning, n: 1}", "q_learning, n: 1, mu: 0.5}")
    runs = load_config(_write(tmp_path, text), "quick").runs
    mus = sorted((r.settings["algorithm"], r.settings["n"], r.settings["mu"]) for r in runs)
    assert mus == [
        ("maxmin", 2, -0.1), ("maxmin", 2, 0.1), ("maxmin", 4, -0.1), ("maxmin", 4, 0.1),
        ("q_learning", 1, 0.5),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("edit", "where", "value"),
    [
        (("seed: 3,", 'seed: "3",'), "fixed.seed", "'3'"),
        (("episodes: 5}", 'episodes: "5"}'), "fixed.episodes", "'5'"),
        (("runs: 4}", "runs: '4'}"), "scales.quick.fixed.runs", "'4'"),
        (("mu: [0.1, -0.1]", 'mu: ["0.1", -0.1]'), "grid.mu", "'0.1'"),
        (("n: [2, 4]", 'n: [2, "4"]'), "variants[1].n", "'4'"),
    ],
)
def test_a_quoted_number_is_the_wrong_type_for_every_setting(tmp_path, edit, where, value):
    """'seed: "3"' or 'episodes: "5"' were turned into numbers (pydantic's lax mode, for
    the tabular model's own fields only), while 'step_size: "0.01"' and every deep setting
    were refused as 'expected a number': one rule now, refused."""
    path = _write(tmp_path, TOY.replace(*edit))
    with pytest.raises(ConfigError) as info:
        load_config(path, "quick")
    assert str(info.value) == f"{path}: {where}: expected a number, got {value}"


@pytest.mark.parametrize("where", [*BOMBS, "merge"])
def test_an_alias_bomb_is_refused_in_one_line_naming_the_file(tmp_path, where: str) -> None:
    """Nine levels of nine aliases (9^9 values) or 29 levels of doubling merge keys, each
    file well under the size limit: one line naming the file and what to do. (Before, the
    checks walked the expanded values or printed them in an error: no answer within
    minutes, gigabytes of memory.)"""
    text = (
        f"name: b\nkind: toy_mdp\nfixed:\n{MERGES}\nscales: {{quick: {{}}}}\n"
        if where == "merge"
        else BOMBS[where].format(laughs="\n".join(_laughs(9)))
    )
    path = tmp_path / f"{where}.yaml"
    path.write_text(text)
    assert path.stat().st_size < 2_000
    with pytest.raises(ConfigError) as err:
        load_config(path, "quick")
    message = str(err.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    assert f"expand to more than {MAX_NODES:,} values" in message
    assert "write the values out" in message


def test_expanded_size_counts_each_use_of_an_anchor() -> None:
    """The count the limit applies to, on documents small enough to count by hand: an
    anchored list of 2 used twice in a list is 1 + 2 * (1 + 2) = 7 nodes; a mapping is
    itself plus its keys and values; a merge counts the merged mapping once more."""

    def size(text: str, limit: int = MAX_NODES) -> int | None:
        return expanded_size(yaml.compose(text, Loader=yaml.SafeLoader), limit)

    assert size("[&a [1, 2], *a]") == 7
    assert size("{k: &a [1, 2], j: *a}") == 1 + 2 * 1 + 2 * 3
    assert size("{b: &b {x: 1}, c: {<<: *b, y: 2}}") == 1 + 2 + 3 + (1 + 2 + 3 + 1)
    assert size("[&a [1, 2], *a]", limit=6) is None  # over the limit
    assert size("&a [1, *a]") is None  # endless


def test_configs_with_a_few_aliases_still_load(tmp_path) -> None:
    """Anchors, aliases and merge keys as configs use them are unchanged: a scale that
    reuses the top level's grid, and a variant merged from a base."""
    doc = parse_document(
        "name: t\nkind: toy_mdp\ngrid: &g {mu: [0.1, -0.1]}\n"
        "fixed: {runs: 2, episodes: 3, seed: 1}\n"
        "variants:\n  - &base {algorithm: q_learning, n: 1}\n  - {<<: *base, algorithm: maxmin,"
        " n: 2}\nscales: {quick: {grid: *g}}\n"
    )
    assert doc["variants"][1] == {"algorithm": "maxmin", "n": 2}
    path = tmp_path / "ok.yaml"
    path.write_text(yaml.safe_dump(doc))
    assert len(load_config(path, "quick").runs) == 4


def test_the_shipped_config_hint_needs_no_configs_beside_a_copy(tmp_path, monkeypatch):
    """./configs holds the shipped toy_mdp.yaml as it is (and a study's own config): the
    hint is the plain command; an edited toy_mdp.yaml there still gets --configs."""
    from maxminq.commands import reproduce

    package = reproduce.package_configs_dir()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "mine.yaml").write_text(OWN)
    shipped = (package / "toy_mdp.yaml").read_bytes()
    (tmp_path / "configs" / "toy_mdp.yaml").write_bytes(shipped)
    assert reproduce.run_shipped_command("toy_mdp") == "maxminq reproduce --only toy_mdp"
    (tmp_path / "configs" / "toy_mdp.yaml").write_bytes(shipped + b"# edited\n")
    assert reproduce.run_shipped_command("toy_mdp") == (
        f"maxminq reproduce --only toy_mdp --configs {package}"
    )
    (tmp_path / "configs" / "toy_mdp.yaml").unlink()
    assert reproduce.run_shipped_command("toy_mdp").endswith(f" --configs {package}")


def test_deep_hidden_as_one_number_is_one_layer() -> None:
    """In a sweep a list in a variant is an axis, so ``hidden: 16`` must mean one layer of
    16 (``hidden: [16, 32]`` is then two runs, one per width)."""
    from maxminq.experiments.registry import validate_deep

    assert validate_deep({"env_id": "CartPole-v1", "hidden": 16})["hidden"] == [16]
    width = validate_deep({"env_id": "maxminq/MinAtar-Breakout-v0", "hidden": 32})["hidden"]
    assert width == [32]
