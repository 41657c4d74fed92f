import sys, pandas as pd, numpy as np
from maxminq.tabular import toy_mdp
from maxminq.linear import mountain_car
import maxminq; print(maxminq.__file__, file=sys.stderr)
a = toy_mdp.run_toy_mdp(mu=0.1, algorithm="maxmin", n=3, runs=4, episodes=20, seed=7, run_offset=2)
b = mountain_car.run_mountain_car(algorithm="maxmin", n=2, sigma2=1.0, step_size=0.1, runs=2, episodes=3, seed=3, max_steps=300)
pd.concat([a.assign(t="toy"), b.assign(t="mc")]).to_csv(sys.argv[1], index=False)
