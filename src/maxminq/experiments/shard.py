"""One sweep on several machines without a cluster: ``--shard K/M`` and the sweep's plan.

``maxminq sweep CONFIG --shard K/M`` runs only shard K of M of the config's runs, so that M
machines (no shared file system, no Ray) each run their share into a folder of their own;
``maxminq merge`` (:mod:`maxminq.experiments.merge`) then brings the folders together.

The split (:func:`shard_runs`) depends only on the runs themselves: their ids (a digest of
their settings, :func:`maxminq.experiments.config.run_id_for`) and their expected cost
(:func:`run_cost`: seed-steps of a deep run, runs x episodes of a classic one). It does not
depend on the machine, on the order of the config's keys or lists, nor on which runs a
folder has already finished: every machine computes the same shards from the same config.
Runs are dealt largest first, each to the shard with the least work so far (ties: the
lower shard; equal runs in run id order), which balances both the work and the number of
runs (equal runs go round the shards in turn).

Each sweep records its *plan* in the store's ``meta`` table (:func:`plan_entries`): per
config name, the scale, the kind and the sorted ids of every run the config makes. Every
machine's folder registers all the config's runs (those of the other shards stay pending
there), so ``maxminq status`` on one machine's folder shows the whole sweep and what is
left for the others. ``merge`` compares the plans of the folders it is given: folders of
an edited config (another grid, another scale) are refused, never mixed. A sharded sweep
also records its shard (``shard:<config>``); a later sweep of that config into the folder
with another ``--shard`` (or none) is refused (:func:`check_folder_shard`): it would run
another machine's share of the runs here (the mix-up of a command copied from the other
machine), whose results the merge would then find twice.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from maxminq.errors import UsageError, is_digits

PLAN_PREFIX = "plan:"  # meta key of a config's plan: plan:<config name>
SHARD_PREFIX = "shard:"  # meta key of the shard a folder's sweeps of a config run

_R = TypeVar("_R")


@dataclass(frozen=True)
class Shard:
    """Shard ``k`` of ``m`` (1 <= k <= m)."""

    k: int
    m: int

    @property
    def text(self) -> str:
        """``K/M``, as ``--shard`` takes it."""
        return f"{self.k}/{self.m}"


def parse_shard(value: str | Shard | tuple[int, int] | None) -> Shard | None:
    """``--shard K/M`` (also a :class:`Shard` or ``(K, M)``) checked; None for no shard.

    Raises :class:`UsageError` naming ``--shard`` for anything but 1 <= K <= M."""
    if value is None or isinstance(value, Shard):
        return value
    expect = "--shard: expected K/M with 1 <= K <= M (shard K of M machines, e.g. 1/2)"
    if isinstance(value, tuple):
        parts: Sequence[Any] = value
        shown = "/".join(str(p) for p in value)
    elif isinstance(value, str):
        parts = value.strip().split("/")
        shown = value
    else:
        raise UsageError(f"{expect}, got {value!r}")
    if len(parts) != 2:
        raise UsageError(f"{expect}, got {shown!r}")
    try:
        k, m = (_integer(p) for p in parts)
    except ValueError:
        raise UsageError(f"{expect}, got {shown!r}") from None
    if m < 1 or not 1 <= k <= m:
        raise UsageError(f"{expect}, got {shown!r}")
    return Shard(k, m)


def _integer(part: Any) -> int:
    """A whole number from ``part`` (text of digits, or an int), else ValueError."""
    if isinstance(part, bool):
        raise ValueError(part)
    if isinstance(part, int):
        return part
    text = str(part).strip()
    if not is_digits(text):  # no signs, no '1.0', no '²' nor another script's digit
        raise ValueError(part)
    return int(text)


def run_cost(run: Any) -> float:
    """A run's expected cost, in the units that set it (as ``maxminq sweep --dry-run``
    counts work): seed-steps for a deep run (its seeds train together), runs x episodes
    for a classic one, 1 for any other kind."""
    settings = run.settings
    if run.kind == "deep" and "steps" in settings:
        return float(settings["steps"]) * max(1, len(settings.get("seeds") or [0]))
    if "runs" in settings and "episodes" in settings:
        return float(settings["runs"]) * float(settings["episodes"])
    return 1.0


def assign_shards(runs: Sequence[Any], m: int) -> dict[str, int]:
    """Run id -> its shard (1..m): largest cost first, each to the shard with the least
    cost so far, the lower shard on a tie; equal costs in run id order. Depends only on
    the runs' ids and costs (not on their order)."""
    load = [0.0] * m
    out: dict[str, int] = {}
    for run in sorted(runs, key=lambda r: (-run_cost(r), r.run_id)):
        if run.run_id in out:
            continue
        i = min(range(m), key=lambda j: (load[j], j))
        load[i] += run_cost(run)
        out[run.run_id] = i + 1
    return out


def shard_runs(runs: Sequence[_R], shard: Shard | None) -> list[_R]:
    """The runs of ``runs`` (in their order) that belong to ``shard``; all for None."""
    if shard is None:
        return list(runs)
    where = assign_shards(runs, shard.m)
    return [run for run in runs if where[run.run_id] == shard.k]  # type: ignore[attr-defined]


def plan_entries(name: str, scale: str, runs: Sequence[Any]) -> dict[str, str]:
    """The ``meta`` entry recording the plan of config ``name``: its scale, kinds and the
    sorted ids of all its runs (the whole config, whatever shard ran)."""
    ids = sorted({run.run_id for run in runs})
    kinds = sorted({run.kind for run in runs})
    plan = {"scale": scale, "kinds": kinds, "runs": ids}
    return {PLAN_PREFIX + name: json.dumps(plan, separators=(",", ":"))}


def read_plans(meta: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    """Config name -> plan, from a store's ``meta`` entries (unreadable ones left out)."""
    out: dict[str, dict[str, Any]] = {}
    for key, value in meta.items():
        if not key.startswith(PLAN_PREFIX):
            continue
        try:
            plan = json.loads(value)
        except ValueError:
            continue
        if isinstance(plan, dict) and isinstance(plan.get("runs"), list):
            out[key[len(PLAN_PREFIX) :]] = plan
    return out


def shard_value(shard: Shard, configs: Sequence[str]) -> str:
    """What a sharded sweep records under ``shard:<config>`` for each config whose runs it
    splits: ``K/M`` when it splits one config's runs alone (``maxminq sweep``),
    ``K/M of a, b, c`` when it splits the runs of several configs together (``maxminq
    reproduce``): shard K/M of those is another split of each config's runs."""
    names = sorted(set(configs))
    return shard.text if len(names) <= 1 else f"{shard.text} of {', '.join(names)}"


def folder_shard_message(out: Any, name: str, recorded: str, given: str | None) -> str:
    """The one line that refuses a sweep of config ``name`` into ``out`` whose shard would
    be recorded as ``given`` (:func:`shard_value`; None: no --shard) where the folder's
    sweeps of it recorded ``recorded``."""
    rk, _, rof = recorded.partition(" of ")
    swept = f"swept with --shard {rk}" + (
        f" of configs {rof} together, as maxminq reproduce splits them" if rof else ""
    )
    if given is None:
        said = "no --shard"
    else:
        gk, _, gof = given.partition(" of ")
        said = f"--shard {gk}"
        if gk == rk:  # the same K/M of other runs: another split
            said += f" of configs {gof} together" if gof else f" of config {name} alone"
    resume = f"resume it with --shard {rk}" + (f" of the same configs ({rof})" if rof else "")
    return (
        f"--shard: {out} holds shard {rk} of config {name} ({swept}); {said} would run "
        f"other machines' runs of it here: {resume}, or sweep into another --out and bring "
        "the folders together with 'maxminq merge'"
    )


def _expected_shards(
    name: str, shard: Shard | None, runs: Sequence[Any]
) -> list[tuple[str, str | None]]:
    """(config, what a sweep of config ``name`` with ``shard`` of ``runs`` records under
    ``shard:<config>``): first ``name`` itself (``K/M``), then each other config whose runs
    are among ``runs`` (a ``maxminq reproduce`` of several configs, :func:`shard_value`)."""
    configs = sorted({str(getattr(run, "config", name)) for run in runs}) or [name]
    out: list[tuple[str, str | None]] = [(name, shard.text if shard else None)]
    for config in configs:
        if config != name:
            out.append((config, shard_value(shard, configs) if shard else None))
    return out


def check_folder_shard(
    store: Any, name: str, shard: Shard | None, runs: Sequence[Any] = ()
) -> None:
    """Raise :class:`UsageError` (:func:`folder_shard_message`) when ``store``'s folder
    records a shard of config ``name``, or of a config of ``runs``, other than the one this
    sweep (of ``shard``, None: no --shard, of ``runs``) records. A folder that records none
    (swept without --shard, or made by ``maxminq merge``) takes any: a sweep there may go
    on as one machine's shard. A ``maxminq reproduce --shard`` splits the runs of all its
    configs together: its folder refuses a ``maxminq sweep`` of one of them (with --shard or
    without) and a plain ``maxminq reproduce``, as a ``sweep --shard`` folder refuses a
    ``reproduce``: each would run other machines' runs there."""
    for config, expected in _expected_shards(name, shard, runs):
        recorded = store.meta(SHARD_PREFIX + config)
        if recorded is not None and recorded != expected:
            raise UsageError(folder_shard_message(store.out_dir, config, recorded, expected))


def record_sweep(
    store: Any, name: str, scale: str, runs: Sequence[Any], shard: Shard | None
) -> None:
    """Record the plan of config ``name`` (all its ``runs``) and, for a sharded sweep, its
    shard (under ``name`` and each config of ``runs``: :func:`check_folder_shard`), in
    ``store``'s ``meta`` table (one transaction)."""
    items: dict[str, str | None] = dict(plan_entries(name, scale, runs))
    for config, value in _expected_shards(name, shard, runs):
        if value is not None:
            items[SHARD_PREFIX + config] = value
    store.set_meta(items)


@dataclass(frozen=True)
class _Planned:
    """A run of a recorded plan, as :func:`assign_shards` reads it: id, kind and settings
    (those the folder's registry holds)."""

    run_id: str
    kind: str
    settings: Mapping[str, Any]


def moved_by_edit(store: Any, name: str, shard: Shard | None, runs: Sequence[Any]) -> str | None:
    """What an edit of config ``name`` moves between the shards of a folder that swept its
    shard ``shard`` (``runs``: the config's runs now), or None when nothing moves.

    The split is of the runs a config makes (:func:`assign_shards`): a config edited
    between two sweeps of one machine's shard (a step size added, a value removed) makes
    other runs, and the runs of both versions go to other shards than before. A run this
    folder finished that is now another shard's is run again by that machine; a run now of
    this shard that was another's (and may be finished there) is run again here. Nothing is
    lost (each version's split covers all its runs, and the merge takes a run finished
    twice with equal results once), but deep runs are hours each, and two machines'
    results of one run may differ in floating point, which the merge refuses. Told only for
    a folder that records this very shard of this config alone (``maxminq sweep``'s) and a
    plan of it whose runs are all registered here."""
    if shard is None or store.meta(SHARD_PREFIX + name) != shard.text:
        return None
    plan = read_plans(store.meta_items(PLAN_PREFIX + name)).get(name)
    if plan is None:
        return None
    old_ids = sorted({str(i) for i in plan["runs"]})
    new_ids = {run.run_id for run in runs}
    if set(old_ids) == new_ids:
        return None
    old = []
    for run_id in old_ids:
        rec = store.get(run_id)
        if rec is None:  # a registry rebuilt since: the old split is not known
            return None
        old.append(_Planned(run_id, rec.kind, rec.settings))
    before = assign_shards(old, shard.m)
    now = assign_shards(runs, shard.m)
    came = [i for i in new_ids if i in before and now[i] == shard.k != before[i]]
    went = [
        i
        for i in old_ids
        if before[i] == shard.k and i in now and now[i] != shard.k
        and store.finished(store.get(i))[0]
    ]  # fmt: skip
    if not came and not went:
        return None
    added, removed = len(new_ids - set(old_ids)), len(set(old_ids) - new_ids)
    parts = []
    if came:
        parts.append(
            f"{len(came)} run(s) of shard {shard.text} were other shards' (run here again "
            "where another machine finished them)"
        )
    if went:
        parts.append(f"{len(went)} run(s) finished here are now other shards' (run again there)")
    # maxminq reproduce's sweep of several configs: 'reproduce (toy_mdp, catcher)'
    # (of 4 configs or more it is named 'reproduce' alone: no config of that name)
    if name == "reproduce":
        what = "the configs of maxminq reproduce make"
    else:
        what = f"{name} make" if name.startswith("reproduce (") else f"config {name} makes"
    return (
        f"{what} other runs than when {store.out_dir} last swept its shard "
        f"{shard.text} ({added} added, {removed} no longer made), so its runs split otherwise: "
        f"{'; '.join(parts)}; sweep the edited config on every machine (the merge refuses a "
        "run finished on two machines with different results: --keep-first), or, to move no "
        "run, sweep only the new values as a config of another name"
    )


def planned_runs(store: Any) -> set[str] | None:
    """The ids of every run that a config as last swept into ``store``'s folder makes (the
    union of the recorded plans), with the older ids its stored runs go by (as a sweep
    adopts them: :func:`maxminq.experiments.runner.stored_aliases`); None for a folder
    without plans (an older maxminq's). A registered run outside it was made by an earlier
    version of its config (edited, at another scale, or resolved otherwise by another
    maxminq): no sweep of the configs as they were last swept runs it. The runs of a
    config that no plan covers (swept only by an older maxminq, which recorded none, beside
    a config swept since) are in it: whether their config still makes them is not known,
    and a sweep of it runs them."""
    from maxminq.experiments.runner import stored_aliases

    plans = read_plans(store.meta_items(PLAN_PREFIX))
    if not plans:
        return None
    current = {str(r) for plan in plans.values() for r in plan["runs"]}
    current |= {old for now, old in stored_aliases(store.records()).items() if now in current}
    members = store.members()
    # a plan covers its config (maxminq reproduce's, of several: the configs of its runs)
    covered = set(plans) | {config for config, run_id in members if run_id in current}
    current |= {run_id for config, run_id in members if config not in covered}
    return current


def earlier_version_runs(store: Any, statuses: tuple[str, ...] = ("pending", "failed")) -> set[str]:
    """The ids of the folder's runs (of ``statuses``: pending or failed unless given) that
    no config as last swept here makes (:func:`planned_runs`:
    left by a sweep of an earlier version of their config: edited, at another scale, or
    resolved otherwise by an older maxminq), which no sweep runs or settles again; none in
    a folder without plans (an older maxminq's)."""
    current = planned_runs(store)
    if current is None:
        return set()
    return {
        rec.run_id
        for rec in store.records()
        if rec.status in statuses and rec.run_id not in current
    }


def shard_splits(store: Any) -> Iterator[tuple[str, Shard, set[str], list[Any]]]:
    """Per sharded sweep recorded in ``store``'s folder (``shard:<name>`` with its plan):
    ``(name, shard, ids of the plan's runs, this shard's registered runs)``, the split
    that ``maxminq status`` counts and the report tells apart. Entries without a plan
    (maxminq reproduce's per config, 'K/M of a, b') or damaged are skipped."""
    plans = read_plans(store.meta_items(PLAN_PREFIX))
    records = store.records()
    for key, text in store.meta_items(SHARD_PREFIX).items():
        name = key[len(SHARD_PREFIX) :]
        plan = plans.get(name)
        if plan is None:
            continue
        try:
            shard = parse_shard(text)
        except UsageError:  # a damaged entry: nothing to tell
            continue
        if shard is None:
            continue
        ids = {str(i) for i in plan["runs"]}
        yield name, shard, ids, shard_runs([r for r in records if r.run_id in ids], shard)


def other_shards_runs(store: Any) -> set[str]:
    """The ids of the runs that another machine's shard runs, in a folder of a sharded
    sweep (:func:`shard_splits`). They stay pending here; ``maxminq merge`` brings their
    results from the other machines' folders. Empty for a folder swept whole (or merged)."""
    out: set[str] = set()
    for _, _, ids, part in shard_splits(store):
        out |= ids - {r.run_id for r in part}
    return out
