"""Shared pytest setup for the whole suite. Kept minimal: module-specific helpers live in their own test files.

`attention` is importable from the repository root through `pythonpath = ["."]` in pyproject.toml;
this guard keeps that true when pytest is started with a different configuration.
"""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
