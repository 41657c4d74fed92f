"""A researcher's own study through the sweep machinery: a config of their own (their mu, their
environment and its keywords, their grid), swept, resumed, reported. Each test pins a bug a
user extending the paper met; the expected texts are the settings the user wrote, not values
produced by the code under test."""

from __future__ import annotations

from pathlib import Path

import pytest

from maxminq.analysis.report import build_report
from maxminq.experiments.config import config_from_document, parse_document
from maxminq.experiments.runner import run_sweep

# A toy-MDP study of the user's own: mu = +-0.2 (the paper's are +-0.1), small and fast.
TOY_OWN = """
name: toy_own
kind: toy_mdp
fixed: {seed: 3, step_size: 0.05, epsilon: 0.1, buffer_size: 50}
grid:
  mu: [0.2, -0.2]
variants:
  - {algorithm: q_learning, n: 1}
  - {algorithm: double_q, n: 2}
  - {algorithm: maxmin, n: [2, 3]}
scales:
  quick: {fixed: {runs: 6, episodes: 30}}
"""


def _sweep(tmp_path: Path, text: str, name: str = "study.yaml", **kwargs) -> Path:
    """Run the config ``text`` (as if saved to ``name``) into ``tmp_path / 'out'``."""
    config = config_from_document(parse_document(text), tmp_path / name, "quick")
    out = tmp_path / "out"
    summary = run_sweep(config, out, workers=1, progress=False, **kwargs)
    assert summary.ok, summary.failures
    return out


MC_OWN = """
name: mc_own
kind: mountain_car
fixed: {runs: 3, episodes: 4, seed: 0, step_size: 0.05, max_steps: 400}
grid:
  sigma2: [10.0]
variants:
  - {algorithm: q_learning, n: 1}
  - {algorithm: maxmin, n: 2}
scales:
  quick: {}
"""


TOY_NO_DOUBLE = """
name: toy_no_double
kind: toy_mdp
fixed: {seed: 0, runs: 4, episodes: 20}
grid:
  mu: [0.1, -0.1]
variants:
  - {algorithm: q_learning, n: 1}
  - {algorithm: maxmin, n: [2, 4]}
scales:
  quick: {}
"""


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_toy_claims_name_the_mu_the_users_runs_have(tmp_path: Path):
    """A toy study at mu = +-0.2: the claims at the positive and the negative mu are checked
    on those runs, and their text named mu = +0.1 and mu = -0.1 (the paper's values, written
    into the claim text) for runs that had neither."""
    out = _sweep(tmp_path, TOY_OWN)
    texts = [c.text for c in build_report(out, reps=50).claims if c.section == "Toy MDP"]
    assert texts, "no toy claims"
    assert not [t for t in texts if "0.1" in t], texts
    assert any(t.startswith("μ = +0.2: Q-learning ends closer") for t in texts), texts
    assert any(t.startswith("μ = −0.2: Double Q approaches") for t in texts), texts
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "μ = +0.1" not in report and "μ = −0.1" not in report


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_two_versions_of_ones_environment_are_told_apart_in_the_report(tmp_path: Path):
    """A user who bumped their environment to v1 and swept both versions into one folder:
    the claims and the final-performance table named both 'mymod:MyEnv' (the version cut
    off), two verdicts and two table rows with the same name and different numbers. Where
    short names collide, the report names the environments in full."""
    from analysis_results import deep_results, write_store

    ids = {"Catcher-v0": "mymod:MyEnv-v0", "Pixelcopter-v0": "mymod:MyEnv-v1"}
    results = {
        name: df.assign(env_id=df["env_id"].map(ids), config="my_study")
        for name, df in deep_results(seeds=3).items()
    }
    write_store(tmp_path, results)
    report = build_report(tmp_path, reps=50)
    versus = [c.text for c in report.claims if c.text.startswith("Maxmin DQN ≥ DQN on")]
    assert sorted(versus) == [
        "Maxmin DQN ≥ DQN on mymod:MyEnv-v0",
        "Maxmin DQN ≥ DQN on mymod:MyEnv-v1",
    ]
    rows = [
        line for line in (tmp_path / "report.md").read_text().splitlines()
        if line.startswith("| mymod:") and "| DQN |" in line
    ]  # fmt: skip
    assert [r.split(" | ")[0] for r in rows] == ["| mymod:MyEnv-v0", "| mymod:MyEnv-v1"]
    # and the report says that these checks are the paper's statements on other games
    text = (tmp_path / "report.md").read_text()
    assert "**Environments outside the paper:** mymod:MyEnv-v0, mymod:MyEnv-v1." in text
    # the paper's own ids (Freeway aside, which the registry offers beyond the paper) are not
    from maxminq.analysis import tables as T
    from maxminq.analysis.report import _outside_paper

    paper = {"Catcher-v0": "maxminq/Catcher-v0", "Pixelcopter-v0": "maxminq/MinAtar-Freeway-v0"}
    tables = T.classify(
        {name: df.assign(env_id=df["env_id"].map(paper)) for name, df in deep_results().items()}
    )
    assert _outside_paper(tables) == ["maxminq/MinAtar-Freeway-v0"]


def test_a_single_environment_of_ones_own_keeps_its_short_name(tmp_path: Path):
    """Without a collision the short name stays (as for the paper's games): 'my-venv:Grid'
    for 'my-venv:Grid-v2' (a '-v' inside the module name cut the name to 'my')."""
    from maxminq.analysis import tables as T

    assert T.env_title("my-venv:Grid-v2") == "my-venv:Grid"
    assert T.env_title("maxminq/MinAtar-Asterix-v0") == "MinAtar-Asterix"
    assert T.env_title("LunarLander-v3", ["LunarLander-v3", "maxminq/Catcher-v0"]) == "LunarLander"
    assert T.env_title("a/Foo-v0", ["a/Foo-v0", "b/Foo-v0"]) == "a/Foo-v0"


def test_bias_verdicts_say_why_seeds_that_ran_to_the_end_have_no_second_half_probe():
    """A short study of one's own (steps 1,000) at the default bias_every (1,000): each seed
    logs one metrics interval, which starts at step 0, so no probe counts for the second
    half and the bias checks are 'insufficient data'. The verdict said the seeds were left
    out as '(stopped early, e.g. diverged)', though every seed ran all its steps; it now
    says they ran to the end and that bias_every leaves no interval in the second half."""
    from analysis_results import deep_results

    from maxminq.analysis import claims as C
    from maxminq.analysis import tables as T

    results = deep_results(seeds=3)
    m = results["metrics"]
    # one interval per seed, logged at the last step, as bias_every 1,000 of 1,000 steps logs
    results["metrics"] = m[m["step"] == 1000].assign(bias_every=1000)
    needle = "Catcher (beyond the paper): Maxmin DQN's measured estimation bias is below DQN's"
    (claim,) = [c for c in C.deep_claims(T.classify(results)) if c.text == needle]
    assert claim.status == C.INSUFFICIENT
    assert "stopped early" not in claim.evidence
    assert "ran all 1,000 steps" in claim.evidence
    assert "bias_every 1,000" in claim.evidence
    assert "3 of 3 Maxmin DQN seeds, 3 of 3 DQN seeds" in claim.evidence


def test_env_keywords_the_environment_refuses_are_named_once(tmp_path: Path):
    """A misspelt keyword of the environment (``lenght``): the error quoted the keywords in
    its message ('refused {"lenght": 5}') and then added ', got {...}' again at the end; the
    README promises the value once. The key path and the environment's reason stay."""
    import pytest

    from maxminq.experiments.config import ConfigError

    doc = parse_document(
        "name: cp\nkind: deep\nscales: {quick: {}}\n"
        "fixed: {env_id: CartPole-v1, env_kwargs: {lenght: 5}, steps: 100, seeds: [0]}\n"
    )
    with pytest.raises(ConfigError) as err:
        config_from_document(doc, tmp_path / "cp.yaml")
    text = str(err.value)
    assert text.startswith(f"{tmp_path / 'cp.yaml'}: fixed.env_kwargs: CartPole-v1 refused ")
    assert "unexpected keyword argument 'lenght'" in text
    assert not text.endswith(", got {'lenght': 5}"), text
    assert "\n" not in text


@pytest.mark.usefixtures("unrendered_figures")  # checks text, not pictures
def test_checks_against_an_algorithm_the_study_did_not_run_say_so(tmp_path: Path):
    """Studies of Maxmin against Q-learning only (Mountain Car, toy MDP): the checks against
    Double Q and Averaged Q said '3 and 0 runs (need 3)', and the report advised more
    seeds or `maxminq reproduce --scale paper` to decide them; no number of seeds does:
    those algorithms were not run. The checks now say so and ask for no more runs."""
    _sweep(tmp_path, MC_OWN)
    out = _sweep(tmp_path, TOY_NO_DOUBLE)
    claims = build_report(out, reps=50).claims
    absent = [c for c in claims if "Double Q" in c.text or "Averaged Q" in c.text]
    # Mountain Car: Double Q and Averaged Q; toy: Double Q's bias, and the two policy checks
    assert len(absent) == 5, [c.text for c in claims]
    for claim in absent:
        assert claim.status == "insufficient data"
        assert "need 3" not in claim.evidence, claim.evidence
        assert claim.evidence.endswith(" in this folder"), claim.evidence
    assert {c.evidence for c in absent if c.section == "Mountain Car"} == {
        "no Double Q runs at σ² = 10 in this folder",
        "no Averaged Q runs at σ² = 10 in this folder",
    }
    assert {c.evidence for c in absent if c.section == "Toy MDP"} == {
        "no Double Q runs at μ = +0.1 in this folder",
        "no Double Q runs at μ = −0.1 in this folder",
    }
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "Those marked 'need 3'" not in report


def test_a_seeds_axis_of_single_seeds_says_what_the_axis_holds(tmp_path: Path):
    """``grid: {seeds: [0, 1, 2]}`` for one run per seed: the error said 'grid.seeds:
    expected a list, got 0', which reads as if the axis were not a list; it now says that
    each value of a seeds axis is the seed list of one run."""
    import pytest

    from maxminq.experiments.config import ConfigError

    doc = parse_document(
        "name: s\nkind: deep\nscales: {quick: {}}\n"
        "fixed: {env_id: CartPole-v1, steps: 100}\ngrid: {seeds: [0, 1, 2]}\n"
    )
    with pytest.raises(ConfigError) as err:
        config_from_document(doc, tmp_path / "s.yaml")
    assert str(err.value) == (
        f"{tmp_path / 's.yaml'}: grid.seeds: expected a list, got 0; a grid or variant axis "
        "of seeds is a list of seed lists, e.g. [[0], [1]]"
    )
