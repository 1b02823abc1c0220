"""The student link a teacher projects: an address the students' laptops can open. Pure Python (no streamlit).

A teacher who opens the app at http://localhost:8501 would project a link to each student's own laptop. The
link is built, in this order, on:
1. ATTENTION_PUBLIC_URL, the address the server is known by (a DNS name, a reverse proxy, a container's
   published port): deploy/serve.sh's --public-url sets it;
2. the teacher's own address, when it is not a loopback one (the teacher opened the app by its network name);
3. this machine's network address (`lan_ip`: the interface of its default route, found without sending anything,
   else the first reachable address it lists) with the teacher's scheme and port.
deploy/serve.py prints the same address, found by the same functions.
Whichever is used, `StudentLink.note` says what it is and what to do when students cannot open it; `problem`
says when no address the students can open is known (only loopback, or a server that listens on loopback only).
"""

from __future__ import annotations

import ipaddress
import socket
import subprocess
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit, urlunsplit

from locales import sentence_space, tr

PUBLIC_URL_ENV = "ATTENTION_PUBLIC_URL"
LISTEN_ENV = "ATTENTION_LISTEN_ADDRESS"  # where the class connects (deploy/serve.py: nginx's address)


@dataclass(frozen=True)
class StudentLink:
    url: str
    note: str  # what address it is (plain text)
    problem: str | None = None  # why students may not be able to open it (plain text), or None


def is_loopback(host: str) -> bool:
    """Whether `host` names this machine only (localhost, 127.x.y.z, ::1)."""
    host = host.strip("[]").lower()
    if host in ("localhost", "localhost.localdomain") or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


# TEST-NET-2 (RFC 5737): reserved for documentation, in no local network and routed nowhere, so the kernel
# answers with the default route for it. A UDP socket "connected" to it only asks the kernel for that route
# (UDP has no handshake): no packet leaves the machine.
OFF_NETWORK = ("198.51.100.1", 9)


def route_ip(target: tuple[str, int] = OFF_NETWORK) -> str | None:
    """The address this machine would send a packet to `target` from (for OFF_NETWORK: the IP of the default
    route's interface), found without sending anything; None when there is no route (no network)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(target)
            return s.getsockname()[0]
    except OSError:
        return None


def listed_ips() -> list[str]:
    """This machine's addresses as `hostname -I` lists them (Linux), else the IPv4 ones its name resolves to."""
    try:
        out = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=5)
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.split()
    except (OSError, subprocess.TimeoutExpired):
        pass
    try:
        return [info[4][0] for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)]
    except OSError:
        return []


def reachable(ip: str | None) -> bool:
    """`ip` is an IPv4 address other machines of a network can reach (not loopback, link-local or 0.0.0.0)."""
    try:
        a = ipaddress.ip_address(ip or "")
    except ValueError:
        return False
    return a.version == 4 and not (a.is_loopback or a.is_link_local or a.is_unspecified or a.is_multicast)


def lan_ip(route=route_ip, listed=listed_ips) -> str | None:
    """This machine's address on the network of its default route (the classroom's, usually): the route's
    interface, else the first reachable address the machine lists; None when it has none (no network)."""
    ip = route()
    if reachable(ip):
        return ip
    return next((a for a in listed() if reachable(a)), None)


def _with_host(url: str, host: str) -> str:
    parts = urlsplit(url)
    port = f":{parts.port}" if parts.port else ""
    host = f"[{host}]" if ":" in host else host
    return urlunsplit((parts.scheme or "http", host + port, "", "", ""))


def _root(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))


def student_link(
    teacher_url: str,
    params: dict[str, str],
    *,
    public_url: str = "",
    listen: str = "",
    base_path: str = "",
    lan: str | None = None,
) -> StudentLink:
    """The link students open (the app's first page with `params`), from the teacher's own address `teacher_url`,
    the configured `public_url`, the address the server `listen`s on and this machine's `lan` address."""
    query = "?" + urlencode(params) if params else ""
    base = "/" + base_path.strip("/") if base_path.strip("/") else ""
    public_url = public_url.strip()
    if public_url:
        parts = urlsplit(public_url)
        if parts.scheme in ("http", "https") and parts.hostname:
            return StudentLink(
                f"{_root(public_url)}/{query}",
                tr("The server's public address ({env}): {host}.", env=PUBLIC_URL_ENV, host=parts.hostname),
            )
        problem = tr(
            "{env} is not an http(s) address ({url}): it is not used.", env=PUBLIC_URL_ENV, url=repr(public_url[:60])
        )
    else:
        problem = None
    parts = urlsplit(teacher_url or "http://localhost:8501/")
    host = parts.hostname or "localhost"
    loopback_only = bool(listen) and is_loopback(listen)
    if loopback_only:
        problem = tr(
            "This server listens on this computer only ({address}): students cannot reach it. Serve it on the network "
            "(deploy/serve.sh does; or streamlit run app.py --server.address 0.0.0.0).",
            address=listen,
        )
    if not is_loopback(host):
        root = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
        return StudentLink(
            f"{root}{base}/{query}", tr("The address you opened the app at: {host}.", host=host), problem
        )
    if lan is None:
        return StudentLink(
            f"{_with_host(teacher_url or 'http://localhost:8501', host)}{base}/{query}",
            tr("This is this computer's own name."),
            problem
            or tr(
                "'{host}' means each student's own laptop, and this computer has no other network address: connect "
                "it to the students' network, or set {env} to the address they can open.",
                host=host,
                env=PUBLIC_URL_ENV,
            ),
        )
    note = tr(
        "This computer's network address ({address}), in place of '{host}', which would mean each student's own "
        "laptop.",
        address=lan,
        host=host,
    )
    if problem is None:
        note += sentence_space() + tr(
            "Students on the same network open it; behind a proxy, a firewall or in a container, set {env} to the "
            "address they can open.",
            env=PUBLIC_URL_ENV,
        )
    return StudentLink(f"{_with_host(teacher_url or 'http://localhost:8501', lan)}{base}/{query}", note, problem)
