"""Check the classroom database the app is configured with, as the app will open it: ATTENTION_DB_URL, or the
SQLite file in ATTENTION_DATA_DIR. deploy/serve.py runs it before it says "serving".

    python -m classroom.check        # prints the database (never its password); exit 0, or 1 and the problem
"""

from __future__ import annotations

import argparse
import sys

from classroom.errors import ClassroomError
from classroom.store import check_database


def main(argv: list[str] | None = None) -> int:
    about = "Check the classroom database the app is configured with, as the app will open it; exit 1 if it cannot."
    argparse.ArgumentParser(prog="python -m classroom.check", description=about).parse_args(argv)
    try:
        found = check_database()
    except ClassroomError as err:
        print(f"class mode cannot start: {err}", file=sys.stderr)
        return 1
    print(f"classroom database: {found}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
