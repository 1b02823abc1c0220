"""Room codes: six characters a class can read off a projector and type. No look-alikes: no 0/O, 1/I/L,
and no U (it reads as V). Pure Python, no database: the app imports it on every page."""

from __future__ import annotations

import re
from typing import Any

CODE_ALPHABET = "ABCDEFGHJKMNPQRSTVWXYZ23456789"
CODE_LENGTH = 6


def normalise_code(code: Any) -> str:
    """A typed join code as stored: spaces dropped, upper case (codes are shown in capitals)."""
    return re.sub(r"\s+", "", str(code or "")).upper()[: CODE_LENGTH * 4]
