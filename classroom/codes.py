"""Room codes: six characters a class can read off a projector and type. Of each pair of look-alikes only one
is used: no O (0), no I or L (1), no U (V), no Z (2), no S (5), no B (8); and no 0 or 1 either. Pure Python, no
database: the app imports it on every page."""

from __future__ import annotations

import re
from typing import Any

CODE_ALPHABET = "ACDEFGHJKMNPQRTVWXY23456789"  # 27 characters: 27**6, about 387 million codes
CODE_LENGTH = 6


def normalise_code(code: Any) -> str:
    """A typed join code as stored: spaces dropped, upper case (codes are shown in capitals)."""
    return re.sub(r"\s+", "", str(code or "")).upper()[: CODE_LENGTH * 4]
