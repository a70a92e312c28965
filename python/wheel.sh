#!/usr/bin/env bash
# The Python package's wheel file, built from this checkout by maturin in a venv of its own
# (python/test.sh calls it, then installs the file and runs the tests):
#
#   bash python/wheel.sh
#
# RANKRISK_PY_VENV (default target/python-venv): the venv, with maturin, numpy, pytest and
# scikit-learn. RANKRISK_PY_TARGET (default python/target): the extension's own cargo target
# folder. RANKRISK_WHEELS (default $RANKRISK_PY_TARGET/wheels): where the one wheel file goes.
# The wheel is abi3 (CPython 3.9 and later), so the same file installs into every venv, and
# tagged with the oldest manylinux its symbols allow (maturin audits the library:
# manylinux_2_34 on Debian 12), so it installs on any such Linux machine without Rust.
#
# Idempotent, and safe to start twice: the build holds $RANKRISK_PY_TARGET/wheel.lock, so a
# second call waits for the first, finds cargo's work done and packs the file again.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${RANKRISK_PY_VENV:-target/python-venv}"
# The extension's own target folder, so that a Burn build's is not touched, made absolute:
# maturin runs cargo inside python/, where a relative one would land in python/python/.
pytarget="$(realpath -m "${RANKRISK_PY_TARGET:-python/target}")"
wheels="$(realpath -m "${RANKRISK_WHEELS:-$pytarget/wheels}")"
mkdir -p "$pytarget"
exec 9>"$pytarget/wheel.lock"
flock 9
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
py="$(cd "$venv" && pwd)/bin/python"
"$py" -m pip install -q --disable-pip-version-check "maturin>=1.16,<2" "numpy>=1.21" pytest \
    "scikit-learn>=1.2"
start=$(date +%s)
rm -f "$wheels"/rankrisk-*.whl
PATH="$(dirname "$py"):$PATH" CARGO_TARGET_DIR="$pytarget" "$(dirname "$py")/maturin" build -q \
    --release --out "$wheels" --interpreter "$py" -m python/Cargo.toml
echo "python/wheel.sh: $(basename "$wheels"/rankrisk-*.whl) built in $(( $(date +%s) - start )) s"
