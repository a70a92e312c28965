#!/usr/bin/env bash
# The Python package's tests, as CI runs them (the README's test command calls this): a venv
# (RANKRISK_PY_VENV, default target/python-venv), a wheel file built from this checkout by
# maturin (python/wheel.sh) and installed from the file as a machine without Rust installs
# it, then pytest on python/tests. The comparison with the command line uses the release
# binary the cargo tests built (RANKRISK_CLI, default ${CARGO_TARGET_DIR:-target}/release/rankrisk).
#
# With RANKRISK_TORCH_TESTS=1 (CI sets it) the PyTorch losses' tests run too, in a venv of their
# own (RANKRISK_TORCH_VENV, default target/python-torch-venv) made by python/torch_venv.sh:
# torch from PyPI (with its CUDA libraries: 5.3 GB, 3 min 45 s to 8 min 33 s on this project's
# machine), LibAUC 2.0.1 without its dependencies. When they do not install within
# RANKRISK_TORCH_INSTALL_S seconds (default 480) the tests are skipped with a message, so that a
# slow mirror cannot make CI run out of time. Without the variable they are skipped (a user's test run downloads no
# torch).
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${RANKRISK_PY_VENV:-target/python-venv}"
# The venv and the wheel file (python/wheel.sh; a build already under way is waited for).
bash python/wheel.sh
py="$(cd "$venv" && pwd)/bin/python"
pytarget="$(realpath -m "${RANKRISK_PY_TARGET:-python/target}")"
wheels="$(realpath -m "${RANKRISK_WHEELS:-$pytarget/wheels}")"
wheel="$(ls "$wheels"/rankrisk-*.whl)"
# Installed as a user without Rust installs it: binaries only (pip may not build anything),
# with no cargo on the PATH.
install_wheel() {
    env -u CARGO -u RUSTUP_HOME PATH="$(dirname "$1"):/usr/local/bin:/usr/bin:/bin" "$1" -m pip \
        install -q --disable-pip-version-check --only-binary :all: --no-deps --force-reinstall \
        "$wheel"
}
install_wheel "$py"
cli="${RANKRISK_CLI:-${CARGO_TARGET_DIR:-target}/release/rankrisk}"
RANKRISK_CLI="$(realpath -m "$cli")" "$py" -m pytest -q python/tests

if [ "${RANKRISK_TORCH_TESTS:-0}" = 1 ]; then
    tvenv="${RANKRISK_TORCH_VENV:-target/python-torch-venv}"
    start=$(date +%s)
    # (CI may have started the same install in the background: this call waits for its lock.)
    if timeout "${RANKRISK_TORCH_INSTALL_S:-480}" bash python/torch_venv.sh "$tvenv"; then
        echo "python/test.sh: torch and LibAUC installed in $(( $(date +%s) - start )) s"
        tpy="$(cd "$tvenv" && pwd)/bin/python"
        install_wheel "$tpy"
        # The metrics' tests again, for their torch tensors (skipped without torch above).
        RANKRISK_CLI="$(realpath -m "$cli")" "$tpy" -m pytest -q python/tests/test_torch.py \
            python/tests/test_metrics.py
    else
        echo "python/test.sh: torch did not install within ${RANKRISK_TORCH_INSTALL_S:-480} s:" \
            "python/tests/test_torch.py skipped"
    fi
fi
