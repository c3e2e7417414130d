"""Shared pytest fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Qt tests run without a display (installer/test.sh sets the same); a plain `pytest` too.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="session")
def testdata_dir() -> Path:
    """The shared real test data (``../shared/testdata`` or ``$VISA_TESTDATA``); skip if absent."""
    env = os.environ.get("VISA_TESTDATA")
    path = Path(env) if env else Path(__file__).resolve().parents[1].parent / "shared" / "testdata"
    if not path.is_dir():
        pytest.skip(f"real test data not found at {path} (set VISA_TESTDATA to its folder)")
    return path
