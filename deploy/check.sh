#!/usr/bin/env bash
# Check deploy/ as far as this machine allows, and say what was and was not run (README, "Deploying").
#   bash deploy/check.sh
# - serve.sh's shell syntax; the nginx configuration serve.py writes for 2 workers, checked by `nginx -t`;
# - the Kubernetes manifests against the Kubernetes schema, strictly (unknown fields fail), with
#   kubernetes-validate from PyPI, if it is installed (pip install kubernetes-validate: not done for you);
# - the Dockerfile is built only where a Docker engine answers (`docker info`); otherwise it says so.
set -uo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
status=0
say() { printf '%-8s %s\n' "$1" "$2"; }

if bash -n deploy/serve.sh; then say PASS "deploy/serve.sh: shell syntax"; else say FAIL "deploy/serve.sh: shell syntax"; status=1; fi

if command -v nginx >/dev/null 2>&1; then
    dir=$(mktemp -d)
    if "$PYTHON" - "$dir" <<'PY'
import sys
from pathlib import Path
sys.path.insert(0, "deploy")
import serve
run = Path(sys.argv[1])
serve.render_config(run, "127.0.0.1:8501", [8502, 8503], serve.compressed_static(run.parent / "attention-serve-cache"))
PY
    then
        if nginx -t -q -p "$dir" -c "$dir/nginx.conf"; then say PASS "nginx -t on the configuration for 2 workers"
        else say FAIL "nginx -t on the configuration for 2 workers"; status=1; fi
    else
        say FAIL "could not write the nginx configuration"; status=1
    fi
    rm -rf "$dir"
else
    say "NOT RUN" "nginx -t: nginx is not installed (apt-get install nginx)"
fi

if command -v kubernetes-validate >/dev/null 2>&1; then
    if kubernetes-validate --strict --quiet deploy/kubernetes/*.yaml; then
        say PASS "deploy/kubernetes/*.yaml against the Kubernetes schema ($(kubernetes-validate --version 2>&1 | tail -1), strict)"
    else
        say FAIL "deploy/kubernetes/*.yaml against the Kubernetes schema"; status=1
    fi
else
    say "NOT RUN" "Kubernetes schema check: kubernetes-validate is not installed (pip install kubernetes-validate)"
fi
say "NOT RUN" "kubectl apply: no cluster here (the manifests were never applied to one)"

if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
    if docker build -q -f deploy/Dockerfile -t attention-from-scratch:check . >/dev/null; then say PASS "docker build"
    else say FAIL "docker build"; status=1; fi
else
    say "NOT RUN" "docker build: no Docker engine answers here (docker info failed)"
fi
exit $status
