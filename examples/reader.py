import sys, time, collections
from maxminq.experiments.store import ResultsStore
out, seconds = sys.argv[1], float(sys.argv[2])
end = time.time() + seconds
res = collections.Counter()
while time.time() < end:
    try:
        s = ResultsStore(out, create=False)
        n = s._conn.execute("SELECT COUNT(*) FROM events").fetchone()[0] // 1000 * 1000
        s.close()
        res[f"ok {n}"] += 1
    except Exception as e:
        res[f"{type(e).__name__}: {str(e)[:150]}"] += 1
print(dict(res))
