import importlib.util, glob
from maxminq.experiments import config as new
spec = importlib.util.spec_from_file_location("maxminq.experiments._oldcfg", "/tmp/h8/oldcfg.py")
import sys; old = importlib.util.module_from_spec(spec); sys.modules[spec.name] = old; spec.loader.exec_module(old)
import pathlib
files = sorted(glob.glob("configs/*.yaml")) + sorted(glob.glob("examples/**/*.yaml", recursive=True)) + sorted(glob.glob("docs/**/*.yaml", recursive=True)) + sorted(glob.glob("tests/**/*.yaml", recursive=True))
for f in files:
    t = pathlib.Path(f).read_text()
    try: a = old.parse_document(t, f)
    except Exception as e: a = ("ERR", str(e))
    try: b = new.parse_document(t, f)
    except Exception as e: b = ("ERR", str(e))
    same = a == b and repr(a) == repr(b)
    line = f"{f}: parse {'same' if same else 'DIFF'}"
    for scale in ("quick", "paper"):
        try:
            ra = [(r.run_id) for r in old.load_config(f, scale).runs]
            rb = [(r.run_id) for r in new.load_config(f, scale).runs]
            line += f" {scale}:{len(ra)} {'same' if ra == rb else 'DIFF'}"
        except Exception as e:
            line += f" {scale}:ERR {str(e)[:80]}"
    print(line)
