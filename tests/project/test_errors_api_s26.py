"""``maxminq.errors`` had no ``__all__``: ``from maxminq.errors import *`` also bound the
modules ``numbers`` (and now ``re``) and ``__future__``'s ``annotations`` in the caller's
namespace."""

from __future__ import annotations

import inspect

import maxminq.errors as errors

OWN = sorted(
    name
    for name, value in vars(errors).items()
    if not name.startswith("_")
    and not inspect.ismodule(value)
    and (getattr(value, "__module__", None) == "maxminq.errors" or name.isupper())
)


def test_a_star_import_of_errors_binds_its_own_names_only() -> None:
    namespace: dict[str, object] = {}
    exec("from maxminq.errors import *", namespace)
    assert sorted(k for k in namespace if k != "__builtins__") == OWN
    assert {"UsageError", "MaxminqError", "MaxminqWarning", "CannotResumeError"} <= set(OWN)
