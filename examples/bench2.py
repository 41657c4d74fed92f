import importlib.util, sys, timeit, torch, numpy as np
torch.set_num_threads(1)
from maxminq import operators as new
spec = importlib.util.spec_from_file_location("maxminq._oldops", "/tmp/h8/oldops.py")
old = importlib.util.module_from_spec(spec); sys.modules[spec.name] = old; spec.loader.exec_module(old)
q = torch.randn(32, 2, 6); r = torch.randn(32); t = torch.zeros(32); nv = torch.randn(32)
res = {}
for rep in range(7):
    for name, mod in (("old", old), ("new", new)):
        for label, f in [("_check_param torch c=1.0", lambda: mod._check_param(1.0, "w", "c", q, "> 0")),
                         ("td_target", lambda: mod.td_target(r, 0.99, t, nv))]:
            v = timeit.timeit(f, number=5000) / 5000 * 1e6
            res[(name, label)] = min(res.get((name, label), 1e9), v)
for k, v in sorted(res.items(), key=lambda kv: kv[0][1]): print(f"{k[0]} {k[1]:28s} {v:6.2f} us")
