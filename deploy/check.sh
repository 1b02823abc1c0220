#!/usr/bin/env bash
# Check deploy/ as far as this machine allows, and say what was and was not run (docs/deploying.md).
#   bash deploy/check.sh            (after the README's test command, which installs what it needs)
#   bash deploy/check.sh --image    also build and run the container (deploy/image.sh check: minutes)
# - serve.sh's shell syntax; the nginx configurations serve.py writes for 2 workers (plain HTTP, and HTTPS with a
#   self-signed pair made for the check), checked by `nginx -t`;
# - the Kubernetes manifests against the Kubernetes schema, strictly (unknown fields fail), with
#   kubernetes-validate (pinned in requirements-dev.txt, so the test command installs it into .venv);
# - with --image, the image built, run, answering its health check and stopped by SIGTERM (deploy/image.sh).
# Python and kubernetes-validate come from the project's environment: the active virtual environment, else
# .venv, else the system's python3 (which then needs the app's packages itself).
set -uo pipefail
cd "$(dirname "$0")/.."
image=0
for arg in "$@"; do
    case "$arg" in
        --image) image=1 ;;
        *) echo "usage: bash deploy/check.sh [--image]" >&2; exit 2 ;;
    esac
done
if [ -z "${PYTHON:-}" ]; then
    if [ -n "${VIRTUAL_ENV:-}" ]; then PYTHON="$VIRTUAL_ENV/bin/python"
    elif [ -x .venv/bin/python ]; then PYTHON=.venv/bin/python
    else PYTHON=python3
    fi
fi
status=0
say() { printf '%-8s %s\n' "$1" "$2"; }
say INFO "Python: $PYTHON"

if bash -n deploy/serve.sh && bash -n deploy/image.sh; then say PASS "deploy/serve.sh, deploy/image.sh: shell syntax"
else say FAIL "deploy/serve.sh, deploy/image.sh: shell syntax"; status=1; fi

if command -v nginx >/dev/null 2>&1; then
    dir=$(mktemp -d)
    # the plain configuration in $dir, and the HTTPS one (a self-signed pair made in $dir/tls) in $dir/https
    if "$PYTHON" - "$dir" <<'PY'
import sys
from pathlib import Path
sys.path.insert(0, "deploy")
import front
import serve
run = Path(sys.argv[1])
static = serve.compressed_static(run.parent / "attention-serve-cache")
serve.render_config(run, "127.0.0.1:8501", [8502, 8503], static)
(run / "front").mkdir()
front.render(run / "front", "127.0.0.1:8080", ["10.0.0.2:8501", "10.0.0.3:8501"])
try:
    cert, key, _ = serve.self_signed_pair(run / "tls", serve.certificate_names(None, "127.0.0.1"))
except serve.CannotMakeCertificate as err:  # no openssl, no cryptography: said below as not run
    print(err, file=sys.stderr)
else:
    (run / "https").mkdir()
    serve.render_config(run / "https", "127.0.0.1:8501", [8502, 8503], static, cert, key)
PY
    then
        if nginx -t -q -p "$dir" -c "$dir/nginx.conf"; then say PASS "nginx -t on the configuration for 2 workers"
        else say FAIL "nginx -t on the configuration for 2 workers"; status=1; fi
        if nginx -t -q -p "$dir/front" -c "$dir/front/front.conf"; then
            say PASS "nginx -t on deploy/front.py's configuration for 2 machines"
        else say FAIL "nginx -t on deploy/front.py's configuration for 2 machines"; status=1; fi
        if [ ! -f "$dir/https/nginx.conf" ]; then
            say "NOT RUN" "nginx -t on the HTTPS configuration: no openssl, nor Python's cryptography, to make a certificate"
        elif nginx -t -q -p "$dir/https" -c "$dir/https/nginx.conf"; then
            say PASS "nginx -t on the HTTPS configuration (serve.py --self-signed)"
        else say FAIL "nginx -t on the HTTPS configuration (serve.py --self-signed)"; status=1; fi
    else
        say FAIL "could not write the nginx configurations with $PYTHON (the README's test command installs .venv)"
        status=1
    fi
    rm -rf "$dir"
else
    say FAIL "nginx -t: nginx is not installed (apt-get install nginx; scripts/test.sh installs it)"; status=1
fi

if "$PYTHON" -c "import kubernetes_validate" >/dev/null 2>&1; then
    if "$PYTHON" -m kubernetes_validate --strict --quiet deploy/kubernetes/*.yaml; then
        version=$("$PYTHON" -m kubernetes_validate --version 2>&1 | tail -1)
        say PASS "deploy/kubernetes/*.yaml against the Kubernetes schema (kubernetes-validate $version, strict)"
    else
        say FAIL "deploy/kubernetes/*.yaml against the Kubernetes schema"; status=1
    fi
else
    say FAIL "Kubernetes schema check: kubernetes-validate is not installed for $PYTHON (pip install -r requirements-dev.txt)"
    status=1
fi
say "NOT RUN" "kubectl apply: no cluster here (the manifests were never applied to one)"

if [ "$image" = 1 ]; then
    if bash deploy/image.sh check; then say PASS "the image: built, healthy through its port, stopped by SIGTERM"
    else say FAIL "the image (deploy/image.sh check)"; status=1; fi
else
    say "NOT RUN" "the image: bash deploy/check.sh --image builds and runs it (the suite's tests/browser/test_image.py does)"
fi
exit $status
