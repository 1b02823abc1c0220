"""Shared test setup. Kept minimal: module-specific helpers live in their own test files."""
import sys
from pathlib import Path

# `attention` is imported from the working tree however pytest is started (`pytest`, `python -m pytest`).
ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
