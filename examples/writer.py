import sys, time, sqlite3
sys.path.insert(0, "/work/main/tests")
import test_sweep_review17 as k
k.register()
from maxminq.experiments.config import config_from_document
from maxminq.experiments.store import ResultsStore
out, seconds, ckpt = sys.argv[1], float(sys.argv[2]), sys.argv[3] == "1"
config = config_from_document({"name": "ro", "kind": "tiny17", "grid": {"k": list(range(50))}, "scales": {"q": {}}}, "ro.yaml", "q")
with ResultsStore(out, lock=True) as store:
    store.register(config.runs)
    end = time.time() + seconds
    i = 0
    while time.time() < end:
        r = config.runs[i % 50]
        store.mark_running(r.run_id)
        store.mark_finished(r.run_id) if hasattr(store, "mark_finished") else None
        if ckpt and i % 5 == 0:
            store._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        i += 1
    print("writes", i)
