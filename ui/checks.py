"""A check's outcome on the page: a success box when it holds, an error box when it does not."""

PASS, FAIL = ":material/check_circle:", ":material/cancel:"


def outcome_box(where, passed: bool, sentence: str) -> None:
    """`sentence` (markdown the caller made safe) in a success box if `passed`, else an error box, each with its
    icon, in `where` (st or a container)."""
    (where.success if passed else where.error)(sentence, icon=PASS if passed else FAIL)
