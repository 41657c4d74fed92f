"""``maxminq.theory`` (and every subpackage the package docstring lists) after a bare
``import maxminq``: it was an AttributeError (only the operators are imported with the
package), so ``import maxminq; maxminq.theory.choose_n(100)`` failed. They are imported on
first use now, and ``import maxminq`` alone still imports none of them (nor torch)."""

from __future__ import annotations

import math
import subprocess
import sys

CODE = """
import sys
import maxminq
print(sorted(m for m in sys.modules if m.startswith("maxminq.") and m.count(".") == 1))
print("torch" in sys.modules)
print(maxminq.theory.choose_n(8))
from maxminq.theory import choose_n
print(maxminq.theory.choose_n is choose_n, maxminq.envs is sys.modules["maxminq.envs"])
print(all(name in dir(maxminq) for name in ("theory", "deep", "envs", "tabular", "linear")))
try:
    maxminq.theroy
except AttributeError as err:
    print(err)
"""


def _least_biased_n(m: int) -> int:
    """Theorem 1 by hand: argmin over N of |1 - 2 t_MN|, t_MN = Gamma(M+1) Gamma(1+1/N) /
    Gamma(M+1+1/N) (tau = gamma = 1; the smallest N on a tie)."""

    def bias(n: int) -> float:
        t = math.exp(math.lgamma(m + 1) + math.lgamma(1 + 1 / n) - math.lgamma(m + 1 + 1 / n))
        return abs(1 - 2 * t)

    return min(range(1, 1001), key=bias)


def test_subpackages_are_imported_on_first_use() -> None:
    out = subprocess.run(
        [sys.executable, "-c", CODE], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    imported = eval(out[0])  # the package's own modules a bare import loaded
    assert "maxminq.theory" not in imported and "maxminq.deep" not in imported, imported
    assert out[1] == "False"
    assert out[2] == str(_least_biased_n(8))
    assert out[3] == "True True"
    assert out[4] == "True"
    assert out[5] == "module 'maxminq' has no attribute 'theroy'"
