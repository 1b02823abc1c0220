"""Serve the app to a class: nginx in front of K Streamlit workers, supervised. Started by deploy/serve.sh.

    python deploy/serve.py [--workers K] [--port P] [--address A] [--self-signed | --cert FILE --key FILE]
                           [--public-url URL] [--run-dir DIR] [--no-restart] [--pin auto|on|off]

- K workers (`streamlit run app.py`, default one per core) listen on 127.0.0.1 only, on the ports after P
  (P+1 ... P+K, unless --worker-port says otherwise); they share one cookie secret, made for this run. With one
  worker per core (the default), worker i is pinned to core i (`--pin`).
- nginx (deploy/nginx.conf.template, filled in here) listens on A:P and proxies to them: a cookie keeps a
  browser on one worker, and moves it to a live one when its worker is down. Streamlit's static bundles are
  served by nginx from a copy compressed ahead of time (made once per Streamlit version, in --cache-dir,
  by default attention-serve-cache/static-<version> beside the run dir).
- The classroom database the app will open (ATTENTION_DB_URL, or the SQLite file) is checked first
  (`python -m classroom.check`, with the workers' environment): if it cannot be used, nothing is started.
- HTTPS with `--cert FILE --key FILE`, or `--self-signed` (a pair made once and kept in ~/.cache, for the
  machine's names and addresses); plain HTTP on the same port is redirected to https.
- nginx starts once every worker answers, and "serving" is said once a request through nginx succeeds: a
  request to a worker that is not up yet would fail and mark it down for nginx's fail_timeout. It then prints
  the address for this machine's browser and the one to give the students: the machine's address on the
  network of its default route, or `--public-url` (ATTENTION_PUBLIC_URL) behind a proxy or a container.
- The supervisor restarts a worker whose process ended or whose /_stcore/health stopped answering, and stops
  everything when it receives SIGINT (Ctrl-C) or SIGTERM. The children also die with it if it is killed
  outright (Linux's parent-death signal), so no process is left behind.
"""

from __future__ import annotations

import argparse
import ctypes
import gzip
import hashlib
import ipaddress
import json
import os
import re
import secrets
import shutil
import signal
import socket
import ssl
import stat
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = Path(__file__).with_name("nginx.conf.template")
COMPRESSED = (".js", ".css", ".json", ".svg", ".map", ".txt", ".html", ".ttf")
HEALTH_EVERY_S = 2.0
HEALTH_FAILURES_BEFORE_RESTART = 5  # a worker that answers no health check for ~25 s is stuck: restarted
STOP_GRACE_S = 8.0


def log(msg: str, *more: str) -> None:
    """Print `msg` (and the lines `more`) with the time, in one write: a reader never sees half of a block."""
    stamp = f"[serve {time.strftime('%H:%M:%S')}]"
    print("\n".join(f"{stamp} {line}" for line in (msg, *more)), flush=True)


def _die_with_parent() -> None:
    """In a child, before exec: SIGTERM it when the supervisor dies (even by SIGKILL); Linux only."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def usable_cores() -> list[int]:
    """The cores this process may run on (a container's CPU set, not the machine's count)."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return list(range(os.cpu_count() or 1))


def worker_cores(workers: int, pin: str, cores: list[int]) -> list[set[int] | None]:
    """The cores each worker may run on (None: any). `pin` "auto" pins worker i to core i when there is one
    worker per core, the default (each interpreter lock then keeps its own core's caches, and the two never
    trade places); "on" pins them round-robin whatever their number; "off" leaves the scheduler free."""
    if pin not in ("auto", "on", "off"):
        raise ValueError(f"pin must be auto, on or off, not {pin!r}")
    if pin == "off" or not cores or (pin == "auto" and (workers != len(cores) or workers < 2)):
        return [None] * workers
    return [{cores[i % len(cores)]} for i in range(workers)]


# ---------------------------------------------------------------- the address students open

# Where the students' laptops reach this machine: one rule for the printed address and the class page's student link
# (ui/student_link.py, which imports nothing but the standard library).
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from ui.student_link import LISTEN_ENV, PUBLIC_URL_ENV, is_loopback, lan_ip  # noqa: E402


def in_container() -> bool:
    """Running in a container (docker's /.dockerenv, podman's /run/.containerenv): its own address is not the
    one students reach."""
    return Path("/.dockerenv").exists() or Path("/run/.containerenv").exists()


def url_of(scheme: str, host: str, port: int) -> str:
    """`scheme://host:port`, without the port when it is the scheme's own (443 for https, 80 for http)."""
    if ":" in host:  # IPv6
        host = f"[{host}]"
    default = {"http": 80, "https": 443}[scheme]
    return f"{scheme}://{host}" if port == default else f"{scheme}://{host}:{port}"


def where_to_open(
    scheme: str, address: str, port: int, public_url: str | None, lan: str | None, container: bool = False
) -> list[str]:
    """What serve.py prints once serving: the address for this machine's browser and the one to give the
    students, or why the students cannot reach it and what to do. `address` is where nginx listens."""
    everywhere = address in ("0.0.0.0", "::")
    here = url_of(scheme, "localhost" if everywhere or is_loopback(address) else address, port)
    if public_url:
        return [f"give the students:  {public_url}  (--public-url)", f"on this machine:    {here}"]
    if is_loopback(address):
        return [
            f"on this machine:    {here}",
            f"students cannot reach it: it listens on {address} only, an address of this machine alone. To serve "
            "the class, start it without --address (every interface) or with this machine's network address; "
            "behind a reverse proxy, give the proxy's address with --public-url.",
        ]
    students = url_of(scheme, address if not everywhere else lan or "<this machine's address>", port)
    if container and everywhere:
        host_side = url_of(scheme, "<host address>", port)
        return [
            f"give the students:  the host's address and the port it publishes (docker run -p {port}:{port} ...: "
            f"{host_side})" + (f", or {students} if the container shares the host's network" if lan else ""),
            f"on this machine:    {here}; -e {PUBLIC_URL_ENV}=<the students' address> prints it here and puts it "
            "in the class page's links",
        ]
    if everywhere and not lan:
        return [
            f"give the students:  {students}: no network address was found (is this machine on the class's network?)",
            f"on this machine:    {here}",
        ]
    return [f"give the students:  {students}", f"on this machine:    {here}"]


def public_url_arg(text: str) -> str:
    """--public-url: an http(s) URL with a host (argparse type); returned without a trailing slash."""
    parts = urllib.parse.urlsplit(text.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an address students can open, e.g. https://attention.example.org"
        )
    return text.strip().rstrip("/")


def worker_env(base: dict, cookie_secret: str, listen: str, public_url: str | None) -> dict:
    """The workers' environment: the caller's, one cookie secret for all (a browser's cookies are valid on every
    worker), where the class connects (nginx's `listen` address: the workers' own is loopback) and, when given,
    the address students open. The class page's student link reads both (ui/student_link.py)."""
    env = {**base, "STREAMLIT_SERVER_COOKIE_SECRET": cookie_secret, LISTEN_ENV: listen}
    env.pop(PUBLIC_URL_ENV, None)
    if public_url:
        env[PUBLIC_URL_ENV] = public_url
    return env


# ---------------------------------------------------------------- the classroom database


def redact(text: str, db_url: str) -> str:
    """`text` without the password of the database URL `db_url` (a driver's message may quote it)."""
    try:
        password = urllib.parse.urlsplit(db_url).password
    except ValueError:
        password = None
    if not password:
        return text
    for form in {password, urllib.parse.unquote(password), urllib.parse.quote(password, safe="")}:
        text = text.replace(f":{form}@", ":***@")
        if len(form) >= 4:  # a shorter one would blank letters of every word
            text = text.replace(form, "***")
    return text


def database_ready(env: dict, timeout: float = 60.0) -> bool:
    """Run `python -m classroom.check` with the workers' environment: the classroom database opens as the app
    will open it. Logs which database (without its password) or the problem."""
    db_url = env.get("ATTENTION_DB_URL", "")
    try:
        out = subprocess.run(
            [sys.executable, "-m", "classroom.check"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        said, ok = (out.stdout + out.stderr).strip(), out.returncode == 0
    except subprocess.TimeoutExpired:
        said, ok = f"class mode cannot start: the classroom database did not answer within {timeout:.0f} s", False
    for line in redact(said, db_url).splitlines()[-20:] or [f"python -m classroom.check failed ({out.returncode})"]:
        log(line)
    if not ok:
        log(
            "nothing was started: correct ATTENTION_DB_URL (or unset it to use the SQLite file in "
            "ATTENTION_DATA_DIR) or start the database, then start again"
        )
    return ok


# ---------------------------------------------------------------- HTTPS

CERT_DAYS = 365  # under Apple's 825-day limit for any TLS server certificate
CERT_RENEW_DAYS = 30  # a pair closer to its end than this is made again (never expiring during a course)
CERT_NAME = "attention-from-scratch self-signed"


def tls_dir() -> Path:
    """Where --self-signed keeps its pair: kept across restarts and reboots (/tmp may be emptied), since a new
    certificate means a new warning page on every device."""
    cache = os.environ.get("ATTENTION_CACHE") or Path.home() / ".cache" / "attention-from-scratch"
    return Path(cache) / "tls"


def certificate_names(lan: str | None, address: str) -> list[str]:
    """The names and addresses a self-signed certificate is made for: localhost, this machine's name, its LAN
    address and the address nginx listens on when it is a particular one."""
    names = ["localhost", "127.0.0.1", "::1"]
    host = socket.gethostname()
    if re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?", host) and host not in names:
        names.append(host)
    for ip in (lan, address):
        if ip and ip not in ("0.0.0.0", "::") and ip not in names:
            names.append(ip)
    return names


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return False


class CannotMakeCertificate(RuntimeError):
    pass


def self_signed_pair(folder: Path, names: list[str]) -> tuple[Path, Path, bool]:
    """A self-signed certificate and its key for `names`, in `folder`: reused while it covers them and has a month
    left, else made again (covering the names it had too: a laptop that moves between two networks gets one
    certificate for both). Returns (certificate, key, made now)."""
    cert, key, info = folder / "self-signed.crt", folder / "self-signed.key", folder / "self-signed.json"
    try:
        kept = json.loads(info.read_text())
        if set(names) <= set(kept["names"]) and kept["until"] - time.time() > CERT_RENEW_DAYS * 86400:
            if cert.exists() and key.exists():
                return cert, key, False
        names = [*names, *(n for n in kept["names"] if n not in names)]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o700)  # the key: only this user (and root, whose nginx master reads it) may read it
    new_cert, new_key = folder / f".new-{os.getpid()}.crt", folder / f".new-{os.getpid()}.key"
    if shutil.which("openssl"):
        _openssl_pair(new_cert, new_key, names)
    else:
        _cryptography_pair(new_cert, new_key, names)
    new_key.chmod(0o600)
    os.replace(new_key, key)
    os.replace(new_cert, cert)
    info.write_text(json.dumps({"names": names, "until": time.time() + CERT_DAYS * 86400}))
    return cert, key, True


def _openssl_pair(cert: Path, key: Path, names: list[str]) -> None:
    san = ",".join(f"IP:{n}" if _is_ip(n) else f"DNS:{n}" for n in names)
    config = (
        "[req]\nprompt = no\ndistinguished_name = dn\nx509_extensions = v3\n"
        f"[dn]\nCN = {CERT_NAME}\n"
        f"[v3]\nsubjectAltName = {san}\nbasicConstraints = critical,CA:FALSE\n"
        "keyUsage = critical,digitalSignature,keyEncipherment\nextendedKeyUsage = serverAuth\n"
        "subjectKeyIdentifier = hash\n"
    )
    with tempfile.NamedTemporaryFile("w", suffix=".cnf", dir=cert.parent) as cnf:
        cnf.write(config)
        cnf.flush()
        cmd = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256", "-days", str(CERT_DAYS)]
        cmd += ["-keyout", str(key), "-out", str(cert), "-config", cnf.name]
        out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise CannotMakeCertificate(f"openssl could not make a self-signed certificate: {out.stderr.strip()}")


def _cryptography_pair(cert: Path, key: Path, names: list[str]) -> None:
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import rsa
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
    except ImportError:
        raise CannotMakeCertificate(
            "--self-signed makes its certificate with openssl (apt-get install openssl) or Python's cryptography "
            "package (pip install cryptography), and neither is here. Install one, or give a certificate and its "
            "key with --cert FILE --key FILE."
        ) from None
    from datetime import UTC, datetime, timedelta

    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, CERT_NAME)])
    san = [x509.IPAddress(ipaddress.ip_address(n)) if _is_ip(n) else x509.DNSName(n) for n in names]
    usage = dict.fromkeys(("content_commitment", "data_encipherment", "key_agreement", "key_cert_sign"), False)
    usage |= dict.fromkeys(("crl_sign", "encipher_only", "decipher_only"), False)
    now = datetime.now(UTC)
    built = (
        x509.CertificateBuilder(subject_name=name, issuer_name=name, public_key=private.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=CERT_DAYS))
        .add_extension(x509.SubjectAlternativeName(san), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_encipherment=True, **usage), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(private, hashes.SHA256())
    )
    plain = serialization.NoEncryption()
    key.write_bytes(private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, plain))
    cert.write_bytes(built.public_bytes(serialization.Encoding.PEM))


def fingerprint(cert: Path) -> str:
    """The certificate's SHA-256 fingerprint, as browsers show it (Chrome: the padlock, then Certificate)."""
    der = ssl.PEM_cert_to_DER_cert(cert.read_text())
    return ":".join(f"{b:02X}" for b in hashlib.sha256(der).digest())


def tls_directives(cert: Path | None, key: Path | None) -> str:
    """The server block's TLS lines for nginx (nothing when serving plain HTTP)."""
    if cert is None:
        return "        # plain HTTP: no certificate (serve.py --self-signed, or --cert FILE --key FILE)"
    return "\n".join(
        [
            f"        ssl_certificate     {cert};",
            f"        ssl_certificate_key {key};",
            "        ssl_protocols TLSv1.2 TLSv1.3;",
            "        ssl_session_cache shared:attn_tls:1m;",
            "        ssl_session_timeout 1h;",
            "        # Plain HTTP on this port (an address typed without https://) is nginx's code 497: sent on to",
            "        # the same address over https. It carries no secret: the app marks its cookies Secure on https.",
            "        error_page 497 =302 https://$http_host$request_uri;",
        ]
    )


# ---------------------------------------------------------------- the configuration


def static_dir() -> Path:
    import streamlit

    return Path(streamlit.__file__).parent / "static"


def compressed_static(cache_root: Path) -> Path:
    """A copy of Streamlit's static/ with a .gz beside every text file (nginx's gzip_static serves those);
    made once per Streamlit version. Returns the directory to use as nginx's root for /static/."""
    import streamlit

    target = cache_root / f"static-{streamlit.__version__}"
    if (target / ".complete").exists():
        return target
    log(f"compressing Streamlit's static files once (gzip -9) into {target} ...")
    t0 = time.time()
    partial = target.with_name(target.name + f".partial-{os.getpid()}")
    shutil.copytree(static_dir(), partial)
    raw = packed = 0
    for path in partial.rglob("*"):
        if path.is_file() and path.suffix in COMPRESSED:
            data = path.read_bytes()
            gz = gzip.compress(data, compresslevel=9, mtime=0)
            if len(gz) < len(data):
                path.with_name(path.name + ".gz").write_bytes(gz)
                raw, packed = raw + len(data), packed + len(gz)
    (partial / ".complete").write_text(streamlit.__version__)
    if target.exists():  # another serve.py finished first
        shutil.rmtree(partial)
    else:
        partial.rename(target)
    log(f"  {raw / 1e6:.1f} MB of text -> {packed / 1e6:.1f} MB compressed in {time.time() - t0:.0f} s")
    return target


def closed_to_nginx_workers(path: Path) -> Path | None:
    """The first folder on the way to `path` that nginx's worker processes cannot enter, or None.

    Started by root, nginx runs its workers as the unprivileged user `nobody` (its default `user`), who
    enters a folder only through its "others" execute bit; started by anyone else, the workers are that
    user. A folder they cannot enter makes every /static/ request fail in nginx ("stat() ... Permission
    denied") and fall back to the Streamlit workers, uncompressed and uncached.
    """
    if os.geteuid() != 0:
        return None
    for folder in (*reversed(path.parents), path):
        if not folder.stat().st_mode & stat.S_IXOTH:
            return folder
    return None


def upstreams(ports: list[int]) -> str:
    """The upstream groups and cookie maps for the workers: `attn_any` (a new session's websocket, and a
    browser's requests before it has a worker: the worker with the fewest open connections through it, i.e.
    with the fewest sessions opened as new and still open), and per worker i `attn_w<i>` (that worker, the
    others as backups: a browser's requests and resumed websocket, by its cookie)."""
    return sticky_upstreams([f"127.0.0.1:{p}" for p in ports], "attn", "w", "attn_worker")


def sticky_upstreams(servers: list[str], prefix: str, one: str, cookie: str) -> str:
    """nginx's upstream groups for `servers` ("IP:PORT" each), kept by a cookie: `<prefix>_any` (the fewest open
    connections), per server i `<prefix>_<one><i>` (that server, the others as backups), the map from the cookie
    `cookie` to the browser's group (`$<prefix>_pool`), and the map from the server that answered to its number
    (`$<prefix>_served`, what the cookie is set to). deploy/front.py uses it for machines, as this does for workers."""
    server = "        server {address} max_fails=1 fail_timeout=5s{backup};"
    lines = [f"    upstream {prefix}_any {{", "        least_conn;"]
    lines += [server.format(address=a, backup="") for a in servers] + ["    }"]
    for i, address in enumerate(servers):
        lines.append(f"    upstream {prefix}_{one}{i} {{")
        lines.append(server.format(address=address, backup=""))
        lines += [server.format(address=a, backup=" backup") for a in servers if a != address]
        lines.append("    }")
    lines.append("    # the browser's server, from its cookie; no cookie (or a stale one): any server")
    lines.append(f"    map $cookie_{cookie} ${prefix}_pool {{")
    lines += [f'        "{i}" {prefix}_{one}{i};' for i in range(len(servers))]
    lines += [f"        default {prefix}_any;", "    }"]
    lines.append("    # the server that answered (the last one tried), to put in the cookie")
    lines.append(f"    map $upstream_addr ${prefix}_served {{")
    lines += [f'        "~(^|, ){re.escape(a)}$" {i};' for i, a in enumerate(servers)]
    lines += ['        default "";', "    }"]
    return "\n".join(lines)


def render_config(
    run_dir: Path, listen: str, ports: list[int], static_root: Path, cert: Path | None = None, key: Path | None = None
) -> Path:
    """nginx.conf in `run_dir`, from the template: nginx on `listen` (over HTTPS with `cert` and `key`) in front
    of the workers on `ports`."""
    text = TEMPLATE.read_text()
    for name, value in {
        "RUN_DIR": str(run_dir),
        "LISTEN": f"{listen} ssl" if cert else listen,
        "TLS": tls_directives(cert, key),
        "STATIC_ROOT": str(static_root),
        "UPSTREAMS": upstreams(ports),
    }.items():
        text = text.replace(f"@@{name}@@", value)
    left = re.findall(r"@@[A-Z_]+@@", text)
    if left:
        raise ValueError(f"nginx.conf.template: fields left unfilled: {left}")
    for sub in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (run_dir / "tmp" / sub).mkdir(parents=True, exist_ok=True)
    conf = run_dir / "nginx.conf"
    conf.write_text(text)
    return conf


# ---------------------------------------------------------------- the processes


@dataclass
class Worker:
    index: int
    port: int
    env: dict
    log_path: Path | None  # None: the worker writes to the supervisor's own output
    extra_args: list[str] = field(default_factory=list)
    cores: set[int] | None = None  # pinned to these cores (worker_cores), or None: any
    proc: subprocess.Popen | None = None
    failures: int = 0
    restarts: int = 0

    def start(self) -> None:
        cmd = [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            str(ROOT / "app.py"),
            "--server.address",
            "127.0.0.1",  # loopback only: the class reaches the workers through nginx
            "--server.port",
            str(self.port),
            "--server.headless",
            "true",
            *self.extra_args,
        ]
        out = open(self.log_path, "ab") if self.log_path else None
        self.proc = subprocess.Popen(
            cmd, cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT, preexec_fn=self._before_exec
        )
        if out:
            out.close()
        self.failures = 0

    def _before_exec(self) -> None:
        _die_with_parent()
        if self.cores:
            os.sched_setaffinity(0, self.cores)

    def healthy(self, timeout: float = 3.0) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/_stcore/health", timeout=timeout) as r:
                return r.status == 200
        except OSError:
            return False


def port_free(port: int) -> bool:
    import socket

    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the servers do: TIME_WAIT is no obstacle
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def stop_process(proc: subprocess.Popen | None, sig: int = signal.SIGTERM) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(sig)


def wait_all(procs: list[subprocess.Popen], grace: float) -> None:
    deadline = time.time() + grace
    for p in procs:
        try:
            p.wait(timeout=max(0.1, deadline - time.time()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


class Supervisor:
    def __init__(self, args) -> None:
        self.args = args
        self.stopping = threading.Event()
        self.nginx: subprocess.Popen | None = None
        self.workers: list[Worker] = []

    def run(self) -> int:
        args = self.args
        run_dir = Path(args.run_dir).resolve()
        run_dir.mkdir(parents=True, exist_ok=True)
        ports = [args.worker_port + i for i in range(args.workers)]
        busy = [p for p in [args.port, *ports] if not port_free(p)]
        if busy:
            log(f"port(s) {busy} already in use on 127.0.0.1; choose others with --port / --worker-port")
            return 2
        env = worker_env(os.environ, secrets.token_hex(32), args.address, args.public_url)
        if not database_ready(env):
            return 2
        lan = lan_ip()
        try:
            cert, key = self._certificate(lan)
        except CannotMakeCertificate as err:
            log(str(err))
            return 2
        static_root = compressed_static(Path(args.cache_dir).resolve())
        closed = closed_to_nginx_workers(static_root)
        if closed is not None:
            log(
                f"nginx is started by root here, so its workers run as 'nobody', who cannot enter {closed}: "
                f"the static files in {static_root} would never be served by nginx. Choose a --cache-dir "
                "that every user can enter, e.g. --cache-dir /tmp/attention-serve-cache"
            )
            return 2
        conf = render_config(run_dir, f"{args.address}:{args.port}", ports, static_root, cert, key)
        check = subprocess.run(["nginx", "-t", "-q", "-p", str(run_dir), "-c", str(conf)], capture_output=True)
        if check.returncode != 0:
            log(f"nginx rejected the configuration {conf}:\n{check.stderr.decode(errors='replace')}")
            return 2
        cores = worker_cores(len(ports), args.pin, usable_cores())
        self.workers = [
            Worker(
                i,
                port,
                {**env, "ATTENTION_WORKER": str(i)},
                None if args.worker_output == "inherit" else run_dir / f"worker{i}.log",
                args.streamlit_arg,
                cores[i],
            )
            for i, port in enumerate(ports)
        ]
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, lambda *_: self.stopping.set())
        try:
            for w in self.workers:
                w.start()
            log(f"{len(ports)} worker(s) starting on 127.0.0.1:{ports[0]}..{ports[-1]} (logs in {run_dir})")
            if any(cores):
                log("  pinned: " + ", ".join(f"worker {w.index} to core(s) {sorted(w.cores)}" for w in self.workers))
            # nginx starts once the workers answer: a request through it before then would fail ("connect()
            # failed" in its log) and mark the worker down for fail_timeout (5 s) after it came up.
            self._wait_ready()
            if self.stopping.is_set():
                return 0
            self.nginx = subprocess.Popen(
                ["nginx", "-p", str(run_dir), "-c", str(conf)], preexec_fn=_die_with_parent, stdin=subprocess.DEVNULL
            )
            if self._proxy_answers(args.address, args.port):
                self._say_serving(lan, cert)
            self._supervise()
        finally:
            self._stop_all()
        return 0

    @property
    def scheme(self) -> str:
        return "https" if self.args.self_signed or self.args.cert else "http"

    def _certificate(self, lan: str | None) -> tuple[Path | None, Path | None]:
        """The certificate and key nginx serves HTTPS with (None, None: plain HTTP)."""
        args = self.args
        if args.cert:
            return Path(args.cert).resolve(), Path(args.key).resolve()
        if not args.self_signed:
            return None, None
        cert, key, made = self_signed_pair(tls_dir(), certificate_names(lan, args.address))
        names = ", ".join(json.loads(cert.with_suffix(".json").read_text())["names"])
        log(f"{'made' if made else 'using'} the self-signed certificate {cert} (for {names})")
        return cert, key

    def _say_serving(self, lan: str | None, cert: Path | None) -> None:
        """Where to open it, for this machine and for the students, and what its scheme means for them."""
        args = self.args
        lines = [f"serving{' over HTTPS' if cert else ''} with {len(self.workers)} worker(s); Ctrl-C stops everything"]
        lines += [
            "  " + line
            for line in where_to_open(self.scheme, args.address, args.port, args.public_url, lan, in_container())
        ]
        if not cert and (args.public_url or "").startswith("https://"):
            lines.append(
                "  HTTPS is the proxy's: between it and this server, plain HTTP (with the proxy on this machine, "
                "--address 127.0.0.1 keeps it off the network)"
            )
        elif not cert:
            lines.append(
                "  plain HTTP: anyone on this network who listens can read the teacher's key (in a cookie) and every "
                "answer; --self-signed, or --cert FILE --key FILE, serves HTTPS (docs/deploying.md)"
            )
        else:
            lines.append(f"  plain http:// to port {args.port} is sent on to https://")
        if args.self_signed:
            lines += [
                "  the certificate is self-signed: each device shows a warning page the first time it opens the "
                'address (Chrome: "Your connection is not private", Advanced, Proceed; Firefox: Advanced, Accept the '
                "Risk and Continue; Safari: Show Details, visit this website), and Chrome again after about a week",
                f"  its SHA-256 fingerprint (the browser shows it under the certificate): {fingerprint(cert)}",
                "  no warning: a certificate for a DNS name of this machine (--cert FILE --key FILE, e.g. from "
                "Let's Encrypt), or a reverse proxy that has one (with --public-url)",
            ]
        log(*lines)

    def _wait_ready(self, timeout: float = 120.0) -> None:
        deadline = time.time() + timeout
        pending = list(self.workers)
        while pending and time.time() < deadline and not self.stopping.is_set():
            pending = [w for w in pending if not w.healthy(timeout=0.5)]
            if pending:
                self.stopping.wait(0.2)
        if pending:
            log(f"worker(s) {[w.index for w in pending]} not healthy after {timeout:.0f} s; see their logs")

    def _proxy_answers(self, address: str, port: int, timeout: float = 30.0) -> bool:
        """Wait until nginx answers /healthz with a worker's 200 (the class's first request would succeed)."""
        host = {"0.0.0.0": "127.0.0.1", "::": "[::1]"}.get(address, address)
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"
        url = f"{self.scheme}://{host}:{port}/healthz"
        unverified = ssl.create_default_context()  # only asks whether nginx answers: any certificate will do
        unverified.check_hostname, unverified.verify_mode = False, ssl.CERT_NONE
        deadline = time.time() + timeout
        while time.time() < deadline and not self.stopping.is_set() and self.nginx.poll() is None:
            try:
                with urllib.request.urlopen(url, timeout=2, context=unverified) as r:
                    if r.status == 200:
                        return True
            except OSError:
                pass
            self.stopping.wait(0.1)
        if not self.stopping.is_set():
            log(f"nginx does not answer {url} after {timeout:.0f} s; see the messages above")
        return False

    def _supervise(self) -> None:
        while not self.stopping.wait(HEALTH_EVERY_S if self._all_alive() else 0.2):
            if self.nginx.poll() is not None:
                log(f"nginx exited with code {self.nginx.returncode}; stopping")
                return
            for w in self.workers:
                if w.proc.poll() is not None:
                    self._restart(w, f"its process ended (code {w.proc.returncode})")
                elif not w.healthy():
                    w.failures += 1
                    if w.failures >= HEALTH_FAILURES_BEFORE_RESTART:
                        w.proc.kill()
                        w.proc.wait()
                        self._restart(w, f"{w.failures} health checks in a row got no answer")
                else:
                    w.failures = 0

    def _all_alive(self) -> bool:
        return all(w.proc.poll() is None for w in self.workers)

    def _restart(self, w: Worker, why: str) -> None:
        if self.args.no_restart:
            return
        w.restarts += 1
        log(f"worker {w.index} (port {w.port}): {why}; restarting it (restart #{w.restarts})")
        w.start()

    def _stop_all(self) -> None:
        log("stopping nginx and the workers ...")
        procs = [p for p in [self.nginx, *(w.proc for w in self.workers)] if p is not None]
        stop_process(self.nginx, signal.SIGQUIT)  # nginx: finish the requests in flight, then exit
        for w in self.workers:
            stop_process(w.proc)
        wait_all(procs, STOP_GRACE_S)
        log("stopped; no process left behind")


def parse_args(argv: list[str] | None = None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--workers", type=int, default=os.cpu_count() or 1, help="Streamlit processes (default: one per core)"
    )
    parser.add_argument("--port", type=int, default=8501, help="the port the class connects to (nginx)")
    parser.add_argument("--address", default="0.0.0.0", help="where nginx listens (default: every interface)")
    parser.add_argument(
        "--public-url",
        type=public_url_arg,
        default=os.environ.get(PUBLIC_URL_ENV) or None,
        help=f"the address students open, when it is not this machine's (a reverse proxy, a container, a DNS name): "
        f"printed, and given to the app for its student links (default: ${PUBLIC_URL_ENV})",
    )
    parser.add_argument("--cert", help="serve HTTPS with this certificate (PEM; the full chain), with --key")
    parser.add_argument("--key", help="the certificate's private key (PEM)")
    parser.add_argument(
        "--self-signed",
        action="store_true",
        help="serve HTTPS with a self-signed certificate, made once and kept in ~/.cache/attention-from-scratch/tls "
        "(browsers warn the first time)",
    )
    parser.add_argument("--worker-port", type=int, default=None, help="first worker's port (default: port + 1)")
    parser.add_argument("--run-dir", default=None, help="config, logs, pid (default: /tmp/attention-serve-<port>)")
    parser.add_argument("--cache-dir", default=None, help="where the compressed static copy is kept")
    parser.add_argument(
        "--worker-output",
        choices=("file", "inherit"),
        default="file",
        help="workers' output: into worker<i>.log in the run dir (default), or into this program's own output",
    )
    parser.add_argument("--no-restart", action="store_true", help="do not restart a worker that died")
    parser.add_argument(
        "--pin",
        choices=("auto", "on", "off"),
        default="auto",
        help="pin worker i to core i: auto (default) when there is one worker per core, on, or off",
    )
    parser.add_argument(
        "--streamlit-arg", action="append", default=[], help="one more argument for every worker (repeatable)"
    )
    args = parser.parse_args(argv)
    if args.workers < 1:
        parser.error("--workers must be at least 1")
    if bool(args.cert) != bool(args.key):
        parser.error("--cert and --key go together: the certificate and its private key")
    if args.self_signed and args.cert:
        parser.error("--self-signed or --cert/--key, not both")
    for path in filter(None, (args.cert, args.key)):
        if not os.access(path, os.R_OK):
            parser.error(f"cannot read {path}")
    args.worker_port = args.worker_port or args.port + 1
    args.run_dir = args.run_dir or f"/tmp/attention-serve-{args.port}"
    args.cache_dir = args.cache_dir or str(Path(args.run_dir).parent / "attention-serve-cache")
    return args


def main(argv: list[str] | None = None) -> int:
    if shutil.which("nginx") is None:
        log("nginx is not installed: `apt-get install nginx` (Debian/Ubuntu) or your system's package")
        return 2
    return Supervisor(parse_args(argv)).run()


if __name__ == "__main__":
    sys.exit(main())
