"""pytest set-up: the fixtures, the hypothesis profiles (``HYPOTHESIS_PROFILE``: ``dev`` by
default, ``ci`` derandomised, ``long``) and the environment the suite runs in. The shared
helpers are in ``helpers.py``."""

from __future__ import annotations

import os

import pytest
from helpers import shared_bvh_files
from hypothesis import settings


@pytest.fixture
def bvh_files():
    files = shared_bvh_files()
    if not files:
        pytest.skip("../shared/data/bvh is not present")
    return files


settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True)
settings.register_profile("dev", max_examples=50, deadline=None)
settings.register_profile("long", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

# The suite's own processes already use every core: a CLI command run in a test on a cold
# cache starts no compile helper (tests/test_compile_ahead.py switches it on where tested).
os.environ.setdefault("IKRIG_COMPILE_AHEAD", "0")
