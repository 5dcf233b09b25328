from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SPECS = ROOT / "specs"

# run directories are sealed with a key kept outside them (checker.checkpoint.run_key_path): the tests'
# key lives in a private folder of their own, never in the user's ~/.local/state
_KEY_DIR = tempfile.mkdtemp(prefix="groupcheck-test-key-")
os.environ.setdefault("GROUPCHECK_RUN_KEY", os.path.join(_KEY_DIR, "run-key"))


@pytest.fixture(scope="session")
def specs_dir() -> Path:
    return SPECS
