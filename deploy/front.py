"""One front for several machines, each serving the app with deploy/serve.sh and all sharing one PostgreSQL:
nginx in front of the machines' own nginx, keeping each browser on one machine.

    python deploy/front.py --port 8080 --host 10.0.0.2:8501 --host 10.0.0.3:8501 [--run-dir DIR]

Every machine runs `ATTENTION_DB_URL=postgresql+psycopg://... bash deploy/serve.sh --port 8501` (its own nginx
and workers); the students open this front's address. A browser's websocket that starts a new session goes to
the machine with the fewest open websockets through the front; the front then sets a cookie (`attn_host`) naming
that machine, and the browser's page loads and resumed websockets go there. When that machine is down they go to
another (its backups): the browser's new session there finds the class by its class cookie, and the room, its
questions and answers by the shared database (docs/deploying.md, "Several machines"). Each machine's watcher
hears the others' writes through PostgreSQL's LISTEN/NOTIFY (ui/classroom_push.py).

nginx runs in the foreground (`nginx -p <run dir> -c front.conf`), needs no root, and stops with Ctrl-C.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from serve import sticky_upstreams  # noqa: E402  (deploy/ is no package: the two scripts sit side by side)

# an IP address and port: nginx names the machine that answered by its address ($upstream_addr), never by a name
HOST = re.compile(r"^(?:\d{1,3}(?:\.\d{1,3}){3}|\[[0-9A-Fa-f:]+\]):\d{1,5}$")

TEMPLATE = """# The front of several machines (deploy/front.py writes this file; do not edit it by hand).
worker_processes 1;
daemon off;
pid @@RUN_DIR@@/nginx.pid;
error_log stderr warn;

events {
    worker_connections 8192;
}

http {
    access_log @@RUN_DIR@@/access.log;
    client_body_temp_path @@RUN_DIR@@/tmp/body;
    proxy_temp_path @@RUN_DIR@@/tmp/proxy;
    fastcgi_temp_path @@RUN_DIR@@/tmp/fastcgi;
    uwsgi_temp_path @@RUN_DIR@@/tmp/uwsgi;
    scgi_temp_path @@RUN_DIR@@/tmp/scgi;

    map $http_upgrade $connection_upgrade {
        default upgrade;
        ""      close;
    }
    # the scheme the browser used, passed on to the machines (they mark the teacher's cookie Secure on https)
    map $http_x_forwarded_proto $front_proto {
        default $scheme;
        https   https;
    }
    # Streamlit's client offers "streamlit, <xsrf token>, <session id>" when it resumes a session (a reconnect)
    map $http_sec_websocket_protocol $front_resumes {
        "~^[^,]*,[^,]*,\\s*[^,\\s]" 1;
        default                   0;
    }

@@UPSTREAMS@@

    map $front_resumes $front_stream_pool {
        1       $front_pool;
        default front_any;
    }

    server {
        listen @@LISTEN@@;
        server_name _;

        location = /_stcore/stream {
            proxy_pass http://$front_stream_pool;
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $front_proto;
            proxy_connect_timeout 2s;
            proxy_read_timeout 1h;
            proxy_send_timeout 1h;
            proxy_buffering off;
            # the machine that took the websocket becomes the browser's machine
            add_header Set-Cookie "attn_host=$front_served; Path=/; HttpOnly; SameSite=Lax" always;
            add_header X-Attention-Host $front_served always;
        }

        location / {
            proxy_pass http://$front_pool;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $front_proto;
            proxy_connect_timeout 2s;
            proxy_next_upstream error timeout http_502 http_503;
            add_header X-Attention-Host $front_served always;
        }
    }
}
"""


def upstreams(hosts: list[str]) -> str:
    """`front_any` (a new session's websocket: the machine with the fewest open connections), per machine i
    `front_h<i>` (that machine, the others as backups), the cookie's machine, and the machine that answered."""
    return sticky_upstreams(hosts, "front", "h", "attn_host")


def render(run_dir: Path, listen: str, hosts: list[str]) -> Path:
    """front.conf in `run_dir`: nginx on `listen` in front of the machines `hosts` ("address:port" each)."""
    if not hosts:
        raise ValueError("name at least one machine with --host ADDRESS:PORT")
    bad = [h for h in hosts if not HOST.match(h)]
    if bad:
        raise ValueError(f"--host takes IP:PORT (a machine serving deploy/serve.sh, by its IP address), not {bad[0]!r}")
    if len(set(hosts)) != len(hosts):
        raise ValueError("a machine is named twice with --host")
    text = TEMPLATE
    for name, value in {"RUN_DIR": str(run_dir), "LISTEN": listen, "UPSTREAMS": upstreams(hosts)}.items():
        text = text.replace(f"@@{name}@@", value)
    for sub in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (run_dir / "tmp" / sub).mkdir(parents=True, exist_ok=True)
    conf = run_dir / "front.conf"
    conf.write_text(text)
    return conf


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8080, help="the port the class connects to (default 8080)")
    parser.add_argument("--address", default="", help="where the front listens (default: every interface)")
    parser.add_argument("--host", action="append", default=[], help="a machine's ADDRESS:PORT (repeat per machine)")
    parser.add_argument("--run-dir", type=Path, help="config, logs, pid (default: a new temporary folder)")
    args = parser.parse_args(argv)
    if not 0 < args.port < 65536:
        parser.error(f"--port must be between 1 and 65535, not {args.port}")
    nginx = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.path.exists(p)), None)
    if nginx is None:
        parser.error("nginx is not installed (Debian: apt-get install nginx)")
    run_dir = (args.run_dir or Path(tempfile.mkdtemp(prefix="attention-front-"))).resolve()
    run_dir.mkdir(parents=True, exist_ok=True)
    try:
        conf = render(run_dir, f"{args.address}:{args.port}" if args.address else str(args.port), args.host)
    except ValueError as err:
        parser.error(str(err))
    print(f"front on port {args.port} for {', '.join(args.host)} (config {conf})", flush=True)
    os.execv(nginx, [nginx, "-p", str(run_dir), "-c", str(conf)])


if __name__ == "__main__":
    sys.exit(main())
