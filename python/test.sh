#!/usr/bin/env bash
# The Python package's tests, as CI runs them (the README's test command calls this): a venv
# (RANKRISK_PY_VENV, default target/python-venv), the wheel built from this checkout by maturin
# and installed, then pytest on python/tests. The comparison with the command line uses the
# release binary the cargo tests built (RANKRISK_CLI, default
# ${CARGO_TARGET_DIR:-target}/release/rankrisk).
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${RANKRISK_PY_VENV:-target/python-venv}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
py="$(cd "$venv" && pwd)/bin/python"
"$py" -m pip install -q --disable-pip-version-check "maturin>=1.16,<2" "numpy>=1.21" pytest \
    "scikit-learn>=1.2"
start=$(date +%s)
# The extension's own target folder, so that a Burn build's is not touched; maturin from the
# venv (no build isolation: nothing more is downloaded for the build).
PATH="$(dirname "$py"):$PATH" CARGO_TARGET_DIR="${RANKRISK_PY_TARGET:-python/target}" "$py" -m pip install -q \
    --disable-pip-version-check --no-build-isolation --no-deps --force-reinstall ./python
echo "python/test.sh: wheel built and installed in $(( $(date +%s) - start )) s"
cli="${RANKRISK_CLI:-${CARGO_TARGET_DIR:-target}/release/rankrisk}"
RANKRISK_CLI="$(realpath -m "$cli")" "$py" -m pytest -q python/tests
