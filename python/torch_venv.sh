#!/usr/bin/env bash
# The venv that the PyTorch losses' tests run in (python/test.sh with RANKRISK_TORCH_TESTS=1):
# PyTorch from PyPI and LibAUC 2.0.1 without the packages its losses never load.
#
#   bash python/torch_venv.sh VENV
#
# - torch with the CUDA libraries PyPI's Linux wheel depends on (5.3 GB in all): `import torch`
#   loads them even on a machine without a GPU (torch 2.15 refuses to import without
#   libcudart and cuBLAS, tried 2026-11-29), so they cannot be left out.
# - LibAUC without its dependency list: importing its losses needs tqdm, scipy and
#   scikit-learn, not torchvision, pandas or the rest.
#
# Idempotent, and safe to start twice: the install holds VENV.lock, so CI can start it in the
# background while it builds, and python/test.sh's own call waits for it and then finds
# everything in place.
set -euo pipefail
venv="${1:?usage: bash python/torch_venv.sh VENV}"
mkdir -p "$(dirname "$venv")"
exec 9>"$venv.lock"
flock 9
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
py="$venv/bin/python"
pip() { "$py" -m pip -q --disable-pip-version-check "$@"; }
pip install torch "maturin>=1.16,<2" "numpy>=1.21" pytest tqdm scipy "scikit-learn>=1.2"
pip install --no-deps libauc==2.0.1
