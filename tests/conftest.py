from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT / "specs"


@pytest.fixture(scope="session")
def specs_dir() -> Path:
    return SPECS
