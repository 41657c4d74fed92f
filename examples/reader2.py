import sys, time, collections
from maxminq.experiments.store import ResultsStore
out, seconds = sys.argv[1], float(sys.argv[2])
s = ResultsStore(out, create=False)
time.sleep(1.5)
end = time.time() + seconds
res = collections.Counter()
while time.time() < end:
    try:
        n = s._conn.execute("SELECT COUNT(*) FROM events").fetchone()[0]
        m = len(s.records())
        res[f"ok {n}"] += 1
    except Exception as e:
        res[f"{type(e).__name__}: {str(e)[:150]}"] += 1
print(dict(res))
