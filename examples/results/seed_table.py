"""Mean (std) over seeds of the deep equal-budget comparison (docs/RESULTS.md, "Equal budget on the slice").

Reads the summary.json of every run that deep_slice_grid.toml and deep_slice_seeds.toml wrote
under out/deep-slice/ (seed 0 of Fashion-MNIST-LT at 2 passes is the grid's run at the point
the other seeds ran) and prints one markdown row per data set, passes and method: test AUC
and test pAUC[0.05, 0.5] of the evaluation point with the best validation pAUC.

    python3 examples/results/seed_table.py [out/deep-slice]
"""

import json
import pathlib
import statistics
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "out/deep-slice")
runs = {}
for summary in sorted(root.glob("*-e*-s*/summary.json")):
    data, rest = summary.parent.name.rsplit("-e", 1)
    data, method = data.rsplit("-", 1)
    passes, seed = rest.split("-s")
    runs.setdefault((data, int(passes), method), {})[int(seed)] = json.loads(summary.read_text())


def setting(config):
    """The grid's axes in a run's config: what makes two runs the same point."""
    return (config["lr"], config.get("gamma_scale"))


for grid in sorted(root.glob("grid/*/grid.json")):
    method = grid.parent.name
    points = json.loads(grid.read_text())
    # Seed 0 is the grid's run at the point the other seeds ran (deep_slice_seeds.toml), so
    # that every seed of a row trains the same configuration; without other seeds, the
    # chosen point.
    others = runs.get(("fashion-mnist", 2, method), {})
    wanted = setting(next(iter(others.values()))["config"]) if others else None
    summary = None
    for r in points:
        point = pathlib.Path(r["out"])
        point = point if point.is_absolute() else pathlib.Path.cwd() / point
        candidate = json.loads((point / "summary.json").read_text())
        if (wanted is None and r["chosen"]) or (wanted is not None and setting(candidate["config"]) == wanted):
            summary = candidate
            break
    if summary is not None:
        runs.setdefault(("fashion-mnist", 2, method), {})[0] = summary


def cell(values):
    if len(values) < 2:
        return f"{values[0]:.4f}"
    return f"{statistics.mean(values):.4f} ({statistics.stdev(values):.4f})"


order = {"ce": 0, "aucm": 1, "mb": 2, "sbcd": 3}
print("| data | passes | method | seeds | test AUC | test pAUC[0.05, 0.5] |")
print("|---|---|---|---|---|---|")
for (data, passes, method), by_seed in sorted(runs.items(), key=lambda kv: (kv[0][0], kv[0][1], order.get(kv[0][2], 9))):
    best = [s["best"] for _, s in sorted(by_seed.items())]
    print(
        f"| {data}-LT | {passes} | {method} | {len(best)} | "
        f"{cell([b['test_auc'] for b in best])} | {cell([b['test_pauc'] for b in best])} |"
    )
