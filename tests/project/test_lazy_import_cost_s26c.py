"""What 4ac3992's lazy module attributes cost and keep (session 26): ``import maxminq``
and its subpackages import no heavy library (torch, numba, pandas, scipy, matplotlib) and
no module the package did not import before (``pkgutil``, which only a lookup of a missing
attribute needs); a lookup of a name that is no module imports nothing heavy; objects of
modules reached through the lazy attributes pickle by reference, as spawned workers and
Ray's cloudpickle send them, and load in a fresh interpreter. Measured from sys.modules
in fresh interpreters, never by timing."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ["torch", "numba", "pandas", "scipy", "matplotlib", "gymnasium", "pydantic"]


def _run(code: str, stdin: bytes = b"") -> bytes:
    done = subprocess.run(
        [sys.executable, "-c", code], input=stdin, capture_output=True, timeout=120
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return done.stdout


def test_importing_the_packages_imports_nothing_heavy_nor_pkgutil() -> None:
    code = f"""
import json, sys
import numpy  # the one dependency maxminq's operators import
base = set(sys.modules)
import maxminq
import maxminq.tabular, maxminq.linear, maxminq.experiments, maxminq.deep, maxminq.analysis
after_import = sorted(set(sys.modules) - base)
for pkg in (maxminq, maxminq.tabular, maxminq.linear, maxminq.experiments, maxminq.deep):
    assert not hasattr(pkg, "no_such_name") and not hasattr(pkg, "NoSuchName")
after_misses = sorted(set(sys.modules) - base)
print(json.dumps([after_import, after_misses, {HEAVY!r}]))
"""
    after_import, after_misses, heavy = json.loads(_run(code))
    assert "maxminq.tabular" in after_import  # the packages themselves were imported
    assert not [m for m in after_import if m.split(".")[0] in heavy + ["pkgutil"]], after_import
    assert not [m for m in after_misses if m.split(".")[0] in heavy], after_misses
    # a missing name imports no module of maxminq either
    assert [m for m in after_misses if m.startswith("maxminq.")] == [
        m for m in after_import if m.startswith("maxminq.")
    ]


def test_objects_reached_through_lazy_attributes_pickle_into_a_fresh_interpreter() -> None:
    dump = """
import pickle, sys
import numpy as np
import maxminq
mdp = maxminq.tabular.finite_mdp.random_mdp(3, 2, np.random.default_rng(0))
kind = maxminq.experiments.registry.RunKind
import ray.cloudpickle as cp  # what Ray sends: by reference, as pickle
payload = [mdp, maxminq.linear.mountain_car.run_mountain_car, kind]
sys.stdout.buffer.write(pickle.dumps([pickle.dumps(payload), cp.dumps(payload),
                                      repr(mdp.P.tolist()).encode()]))
"""
    load = """
import pickle, sys
import ray.cloudpickle as cp
plain, cloud, p_text = pickle.loads(sys.stdin.buffer.read())
for blob in (plain, cloud):
    mdp, fn, kind = pickle.loads(blob)
    assert repr(mdp.P.tolist()).encode() == p_text
    import maxminq.linear.mountain_car as mc, maxminq.experiments.registry as reg
    assert fn is mc.run_mountain_car and kind is reg.RunKind
    assert type(mdp).__module__ == "maxminq.tabular.finite_mdp"
print("ok")
"""
    assert _run(load, _run(dump)).strip() == b"ok"
