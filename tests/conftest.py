import os
import sys
from pathlib import Path

import pytest

# tests use the reference-case helpers of scripts/reference.py (scripts never import tests)
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("SVMSTRUCT_SHARED", Path(__file__).resolve().parents[1].parent / "shared"))
DATA = SHARED / "data"
REFERENCE = SHARED / "reference"


def need_shared():
    if not REFERENCE.is_dir() or not DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED} (set SVMSTRUCT_SHARED)")


@pytest.fixture
def shared():
    need_shared()
    return SHARED
