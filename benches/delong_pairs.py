#!/usr/bin/env python3
"""Time rankrisk.metrics.delong_test and delong_ci at 10^8 rows (docs/SPEED.md, issue 70): two
normal score columns, 10% positives, seed 0; needs the wheel (python/test.sh's venv) and
about 5 GB of memory."""
import time, numpy as np
from rankrisk import metrics
rng = np.random.default_rng(0)
n = 100_000_000
y = (rng.random(n) < 0.1).astype(np.int8)
s1 = rng.normal(size=n) + 0.8 * y
s2 = s1 + rng.normal(scale=0.7, size=n)
for k in range(2):
    t = time.perf_counter(); r = metrics.delong_test(y, s1, s2); dt = time.perf_counter() - t
    print(f"delong_test 1e8: {dt:.2f} s {r}")
t = time.perf_counter(); r = metrics.delong_ci(y, s1); print(f"delong_ci 1e8: {time.perf_counter()-t:.2f} s")
