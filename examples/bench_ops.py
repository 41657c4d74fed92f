import importlib.util, sys, timeit, torch, numpy as np
torch.set_num_threads(1)
from maxminq import operators as new
spec = importlib.util.spec_from_file_location("maxminq._oldops", "/tmp/h8/oldops.py")
old = importlib.util.module_from_spec(spec); sys.modules[spec.name] = old; spec.loader.exec_module(old)
q = torch.randn(32, 2, 6); qn = np.random.default_rng(0).standard_normal((1, 2, 6))
r = torch.randn(32); t = torch.zeros(32); nv = torch.randn(32)
for name, mod in (("old", old), ("new", new)):
    for label, f in [
        ("td_target", lambda: mod.td_target(r, 0.99, t, nv)),
        ("wdq torch c=1.0", lambda: mod.bootstrap("weighted_double_q", q, c=1.0)),
        ("bc torch sigma=0.5", lambda: mod.bootstrap("bias_corrected", q[:, :1], sigma=0.5)),
        ("wdq numpy c=np.float64", lambda: mod.bootstrap("weighted_double_q", qn, c=np.float64(1.0))),
    ]:
        n = 3000
        best = min(timeit.repeat(f, number=n, repeat=5)) / n * 1e6
        print(f"{name:4s} {label:24s} {best:7.2f} us")
