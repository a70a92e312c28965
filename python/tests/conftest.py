"""Shared fixtures of the Python tests."""

import os

import pytest


@pytest.fixture
def cli():
    """The path of the `rankrisk` command line binary the comparisons run.

    `python/test.sh` (CI) sets RANKRISK_CLI to the release binary the cargo tests built: a
    missing file there is a failure, not a skip. Without RANKRISK_CLI (a user's own pytest run)
    the comparisons are skipped.
    """
    path = os.environ.get("RANKRISK_CLI")
    if path is None:
        pytest.skip("RANKRISK_CLI is not set: no command line binary to compare with")
    if not os.path.isfile(path):
        pytest.fail(f"RANKRISK_CLI={path!r} is not a file: build it with cargo build --release")
    return path
