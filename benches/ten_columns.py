#!/usr/bin/env python3
"""Write /tmp/ten_1e7.csv: ten score columns of 10^7 rows (25% positives, seed 0), for
`rankrisk metrics /tmp/ten_1e7.csv --resamples 0` (docs/SPEED.md, issue 70). Needs numpy and pandas."""
import numpy as np, pandas as pd, time
t=time.time()
rng=np.random.default_rng(0); n=10_000_000
y=(rng.random(n)<0.25).astype(np.int8)
base=rng.normal(size=n)+0.8*y
d={"label":y}
for k in range(10):
    d[f"c{k}"]=np.round(base+rng.normal(scale=0.3+0.1*k,size=n),4)
pd.DataFrame(d).to_csv("/tmp/ten_1e7.csv",index=False)
print("written", time.time()-t)
