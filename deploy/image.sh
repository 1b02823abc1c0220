#!/usr/bin/env bash
# Build the app's container image (deploy/Dockerfile), run it, check it and stop it; with podman or docker.
#
#   bash deploy/image.sh check [--base local|public|IMAGE]   build, run, check, stop; print the figures
#   bash deploy/image.sh build [--base local|public|IMAGE]   build the image attention-from-scratch:latest
#   bash deploy/image.sh base                                the local Debian base (built once, then cached)
#   bash deploy/image.sh start NAME HOST_PORT                run the image as container NAME on 127.0.0.1:HOST_PORT
#   bash deploy/image.sh healthcheck NAME                    run the image's own health check in container NAME
#   bash deploy/image.sh stop NAME                           stop it (SIGTERM, 10 s grace) and remove it
#
# --base local (the default) builds the base from Debian's packages with mmdebstrap (bookworm, python3 and its
# venv module): no image hub is needed, only Debian's mirror and PyPI. The base is built once per machine and
# kept as a tarball under $ATTENTION_CACHE (default ~/.cache/attention-from-scratch) and in the engine's image
# store; `bash deploy/image.sh base --refresh` builds it again (for Debian's security updates).
# --base public uses the public slim Python image (docker.io/library/python:3.11-slim-bookworm).
#
# The engine: $ENGINE if set; else docker when a Docker engine answers (`docker info`); else podman, with
# deploy/containers.conf (runc, no default rlimits; see that file). Prints `key=value` lines that the tests read.
set -euo pipefail
shopt -s inherit_errexit  # a failure inside $(...) stops the script too
cd "$(dirname "$0")/.."

TAG="${TAG:-attention-from-scratch:latest}"
PUBLIC_BASE="docker.io/library/python:3.11-slim-bookworm"
SUITE="bookworm"
BASE_PACKAGES="python3,python3-venv,ca-certificates"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
SECURITY_MIRROR="${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"
CACHE="${ATTENTION_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/attention-from-scratch}"
STOP_GRACE_S=10

say() { echo "[image.sh] $*" >&2; }
die() { say "$*"; exit 2; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

pick_engine() {
    if [ -n "${ENGINE:-}" ]; then :
    elif command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then ENGINE=docker
    elif command -v podman >/dev/null 2>&1; then ENGINE=podman
    else die "no container engine: install podman (apt-get install podman runc) or docker"
    fi
    if [ "$ENGINE" = podman ]; then
        export CONTAINERS_CONF="${CONTAINERS_CONF:-$PWD/deploy/containers.conf}"
    fi
    say "engine: $ENGINE"
}

# The local base's name carries a digest of what goes into it, so a change of packages makes a new base.
base_key() {
    printf '%s|%s|%s|%s' "$SUITE" "$BASE_PACKAGES" "$MIRROR" "$SECURITY_MIRROR" | sha256sum | cut -c1-12
}

local_base() {
    local refresh="${1:-}" key name tar
    key=$(base_key)
    name="localhost/attention-base:$SUITE-$key"
    tar="$CACHE/debian-$SUITE-$key.tar"
    if [ "$refresh" = --refresh ]; then
        rm -f "$tar"
        "$ENGINE" image rm -f "$name" >/dev/null 2>&1 || true
    fi
    if "$ENGINE" image inspect "$name" >/dev/null 2>&1; then
        say "local base $name: in the image store"
        echo "$name"
        return
    fi
    if [ ! -s "$tar" ]; then
        command -v mmdebstrap >/dev/null 2>&1 || die "mmdebstrap is not installed: apt-get install mmdebstrap"
        mkdir -p "$CACHE"
        say "building the local base from Debian's packages (mmdebstrap $SUITE: $BASE_PACKAGES; about a minute) ..."
        local t0
        t0=$(now)
        # minbase: the essential packages and apt; the app's image adds nginx with apt (deploy/Dockerfile).
        mmdebstrap --quiet --variant=minbase --format=tar --include="$BASE_PACKAGES" "$SUITE" "$tar.partial" \
            "deb $MIRROR $SUITE main" "deb $MIRROR $SUITE-updates main" "deb $SECURITY_MIRROR $SUITE-security main"
        mv "$tar.partial" "$tar"
        say "  $tar ($(du -m "$tar" | cut -f1) MB) in $(elapsed "$t0") s"
    else
        say "local base: cached tarball $tar"
    fi
    # An imported tarball has no configuration: give it the PATH and locale a Debian image has.
    "$ENGINE" import \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'ENV LANG=C.UTF-8' \
        --change 'CMD ["/bin/bash"]' \
        "$tar" "$name" >/dev/null
    echo "$name"
}

# The CA bundle pip inside the build trusts: $PIP_CA, else this machine's (which holds any CA that a
# TLS-inspecting proxy between here and PyPI needs). Handed in as a build secret: it stays out of the image.
ca_bundle() {
    local ca="${PIP_CA:-}"
    if [ -z "$ca" ]; then
        for f in /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt; do
            if [ -s "$f" ]; then ca=$f; break; fi
        done
    fi
    echo "$ca"
}

build() {
    local base="local"
    while [ $# -gt 0 ]; do
        case "$1" in
            --base) base="$2"; shift 2 ;;
            *) die "build: unknown argument $1" ;;
        esac
    done
    case "$base" in
        local) base=$(local_base) ;;
        public) base="$PUBLIC_BASE" ;;
    esac
    local args=(build -f deploy/Dockerfile -t "$TAG" --build-arg "BASE=$base")
    [ "$ENGINE" = podman ] && args+=(--format docker)  # keep the HEALTHCHECK (OCI images have none)
    local ca
    ca=$(ca_bundle)
    [ -n "$ca" ] && args+=(--secret "id=pip_ca,src=$ca")
    say "building $TAG on $base (pip installs the requirements from PyPI; a few minutes the first time) ..."
    local t0
    t0=$(now)
    "$ENGINE" "${args[@]}" . >&2
    echo "image=$TAG"
    echo "base=$base"
    echo "build_s=$(elapsed "$t0")"
    echo "size_mb=$(( $("$ENGINE" image inspect -f '{{.Size}}' "$TAG") / 1000000 ))"
}

healthy() {  # the proxy's health through the published port
    python3 - "$1" <<'PY'
import sys, urllib.request
try:
    with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/healthz", timeout=2) as r:
        sys.exit(0 if r.status == 200 and r.read() == b"ok" else 1)
except OSError:
    sys.exit(1)
PY
}

start() {
    local name="$1" port="$2" t0
    "$ENGINE" rm -f "$name" >/dev/null 2>&1 || true
    t0=$(now)
    # The health check runs when asked (`healthcheck`), not on a timer: podman's timers need systemd.
    local args=(run -d --name "$name" -p "127.0.0.1:$port:8501")
    [ "$ENGINE" = podman ] && args+=(--health-interval disable)
    "$ENGINE" "${args[@]}" "$TAG" >/dev/null
    local deadline=$(( $(date +%s) + 120 ))
    until healthy "$port"; do
        if [ "$("$ENGINE" inspect -f '{{.State.Running}}' "$name")" != true ]; then
            "$ENGINE" logs "$name" >&2 || true
            die "the container $name exited before it answered"
        fi
        if [ "$(date +%s)" -ge "$deadline" ]; then
            "$ENGINE" logs "$name" >&2 || true
            die "the container $name did not answer /healthz within 120 s"
        fi
        sleep 0.2
    done
    echo "url=http://127.0.0.1:$port"
    echo "startup_s=$(elapsed "$t0")"
}

healthcheck() {  # the image's own HEALTHCHECK, run inside the container by the engine
    local name="$1"
    if [ "$ENGINE" = podman ]; then
        podman healthcheck run "$name" >&2
    else
        local status
        for _ in $(seq 60); do
            status=$(docker inspect -f '{{.State.Health.Status}}' "$name")
            [ "$status" = healthy ] && break
            sleep 1
        done
        [ "$status" = healthy ]
    fi
    echo "healthcheck=ok"
}

stop() {
    local name="$1" t0
    t0=$(now)
    "$ENGINE" stop -t "$STOP_GRACE_S" "$name" >/dev/null
    echo "stop_s=$(elapsed "$t0")"
    # 0: the supervisor stopped nginx and the workers on SIGTERM and exited; 137: the engine had to kill it
    echo "exit_code=$("$ENGINE" inspect -f '{{.State.ExitCode}}' "$name")"
    "$ENGINE" logs "$name" 2>&1 | tail -3 | sed 's/^/  container: /' >&2
    "$ENGINE" rm -f "$name" >/dev/null
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

check() {
    build "$@"
    local name="attention-check-$$" port
    port=$(free_port)
    trap '"$ENGINE" rm -f "'"$name"'" >/dev/null 2>&1 || true' EXIT
    start "$name" "$port"
    healthcheck "$name"
    stop "$name"
}

cmd="${1:-}"
[ $# -gt 0 ] && shift
case "$cmd" in
    base) pick_engine; local_base "$@" ;;
    build) pick_engine; build "$@" ;;
    start) [ $# -eq 2 ] || die "usage: image.sh start NAME HOST_PORT"; pick_engine; start "$@" ;;
    healthcheck) [ $# -eq 1 ] || die "usage: image.sh healthcheck NAME"; pick_engine; healthcheck "$@" ;;
    stop) [ $# -eq 1 ] || die "usage: image.sh stop NAME"; pick_engine; stop "$@" ;;
    check) pick_engine; check "$@" ;;
    *) sed -n '2,18p' "$0" >&2; exit 2 ;;
esac
