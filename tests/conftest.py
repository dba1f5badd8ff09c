"""Shared fixtures. Tests that need ../shared skip with a reason when it is absent (fresh clones)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
EXAMPLES = REPO / "examples"

# fixtures `fake_engines`, `chc_file`, `chc_program` for the CLI, deadline and portfolio tests
pytest_plugins = ["helpers.fake_engines"]


@pytest.fixture
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent (fresh clone without the team's shared folder)")
    return SHARED


@pytest.fixture
def gcc() -> str:
    path = shutil.which("gcc")
    if path is None:
        pytest.skip("gcc is not installed")
    return path
