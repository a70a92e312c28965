#!/usr/bin/env python3
"""The README's first command's table against docs/RESULTS.md (issue 70).

    python3 .ci/first_command.py PRINTED RESULTS_MD

PRINTED is what `rankrisk train` (the built-in default) printed on stdout. RESULTS_MD's section
"The built-in default" holds tables with the same header ("| data | method | test AUC [95% CI]
| test pAUC [95% CI] | ..."): the first is the whole table of one machine, each further one the
image rows another CPU's kernel set printed. Exit status 1, naming the row, when:
- the printed table's rows are not the first table's rows (the same data and methods, in order);
- a tabular row's AUC or pAUC (or an interval end) differs from the first table's by more
  than one unit of the fourth decimal: the tabular solvers run in f64 on the CPU, and the
  machines measured so far print the same digits.
The image rows (ResNet-20 on the Fashion-MNIST-LT slice) are reported as matching one of the
recorded kernel sets (their AUC and pAUC estimates) or none: gemm picks its micro-kernels at
run time from the CPU, and the sums' order moves a one-pass, one-seed run in its third digit
(RESULTS says by how much), so an unrecorded CPU is not a failure.
"""
import re
import sys

HEADER = "| data | method | test AUC [95% CI] | test pAUC [95% CI] |"
IMAGE = "fashion-mnist"


def rows(lines):
    """The (data, method) -> (AUC, pAUC) rows of each table with HEADER, in order."""
    tables, current = [], None
    for line in lines:
        line = line.strip()
        if line.startswith(HEADER):
            current = []
            tables.append(current)
        elif current is not None and line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if set(cells[0]) <= set("-: "):
                continue
            current.append(((cells[0], cells[1]), (cells[2], cells[3])))
        else:
            current = None
    return tables


def estimates(cells):
    """The AUC and pAUC estimates of a row's cells, without their intervals."""
    return None if cells is None else tuple(c.split(" [")[0] for c in cells)


def close(cells, recorded):
    """Every number of the AUC and pAUC cells (estimates and interval ends) within one unit of
    the fourth decimal of the recorded one: a last-digit rounding flip on another CPU's f64
    sums (faer picks its SIMD width at run time) is not a failure, any larger move is."""
    got = [float(x) for c in cells for x in re.findall(r"-?\d+\.\d+", c)]
    want = [float(x) for c in recorded for x in re.findall(r"-?\d+\.\d+", c)]
    return len(got) == len(want) and all(abs(a - b) <= 1.5e-4 for a, b in zip(got, want))


def section(text, title):
    start = text.index(title)
    end = text.find("\n## ", start + len(title))
    return text[start : end if end >= 0 else len(text)]


def main():
    printed_path, results_path = sys.argv[1], sys.argv[2]
    printed = rows(open(printed_path).read().splitlines())
    reference = rows(
        section(open(results_path).read(), "## The built-in default").splitlines()
    )
    if len(printed) != 1:
        sys.exit(f"{printed_path}: {len(printed)} result tables, expected one")
    if not reference:
        sys.exit(f"{results_path}: no table with the header {HEADER!r} under 'The built-in default'")
    got, whole = printed[0], reference[0]
    keys = [k for k, _ in got]
    want = [k for k, _ in whole]
    if keys != want:
        sys.exit(
            f"first command: rows {keys} differ from {results_path}'s {want} "
            f"({len(keys)} printed, {len(want)} recorded)"
        )
    failed = False
    for (key, value), (_, recorded) in zip(got, whole):
        if not key[0].startswith(IMAGE) and not close(value, recorded):
            print(f"first command: {key[0]} / {key[1]} printed {value}, {results_path} has {recorded}")
            failed = True
    image = {k: estimates(v) for k, v in got if k[0].startswith(IMAGE)}
    matches = [
        i + 1
        for i, table in enumerate(map(dict, reference))
        if image and all(estimates(table.get(k)) == v for k, v in image.items())
    ]
    print(
        f"first command: {len(got)} rows, the {len(got) - len(image)} tabular rows "
        f"{'differ (above)' if failed else 'as recorded (to 1e-4)'}; the {len(image)} image rows "
        + (
            f"match recorded kernel set {matches[0]}"
            if matches
            else "match no recorded kernel set (another CPU's kernels): "
            + "; ".join(f"{k[1]} {' / '.join(v)}" for k, v in image.items())
        )
    )
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
