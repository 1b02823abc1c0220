"""The student link a teacher projects: an address the students' laptops can open. Pure Python (no streamlit).

A teacher who opens the app at http://localhost:8501 would project a link to each student's own laptop. The
link is built, in this order, on:
1. ATTENTION_PUBLIC_URL, the address the server is known by (a DNS name, a reverse proxy, a container's
   published port): deploy/serve.sh's --public-url sets it;
2. the teacher's own address, when it is not a loopback one (the teacher opened the app by its network name);
3. this machine's network address (the interface of its default route, found without sending anything) with the
   teacher's scheme and port.
Whichever is used, `StudentLink.note` says what it is and what to do when students cannot open it; `problem`
says when no address the students can open is known (only loopback, or a server that listens on loopback only).
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit, urlunsplit

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


def lan_address(probe: str = "192.0.2.1") -> str | None:
    """This machine's address on its network: the source address of its default route (a UDP socket's connect()
    picks the route and sends nothing; 192.0.2.1 is a documentation address, never contacted), or None when there
    is only loopback."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect((probe, 9))
            found = s.getsockname()[0]
    except OSError:
        return None
    return None if not found or is_loopback(found) or found == "0.0.0.0" else found


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
                f"{_root(public_url)}/{query}", f"The server's public address ({PUBLIC_URL_ENV}): {parts.hostname}."
            )
        problem = f"{PUBLIC_URL_ENV} is not an http(s) address ({public_url[:60]!r}): it is not used."
    else:
        problem = None
    parts = urlsplit(teacher_url or "http://localhost:8501/")
    host = parts.hostname or "localhost"
    loopback_only = bool(listen) and is_loopback(listen)
    if loopback_only:
        problem = (
            f"This server listens on this computer only ({listen}): students cannot reach it. Serve it on the network "
            "(deploy/serve.sh does; or streamlit run app.py --server.address 0.0.0.0)."
        )
    if not is_loopback(host):
        root = urlunsplit((parts.scheme, parts.netloc, "", "", ""))
        return StudentLink(f"{root}{base}/{query}", f"The address you opened the app at: {host}.", problem)
    if lan is None:
        return StudentLink(
            f"{_with_host(teacher_url or 'http://localhost:8501', host)}{base}/{query}",
            "This is this computer's own name.",
            problem
            or f"'{host}' means each student's own laptop, and this computer has no other network address: connect "
            f"it to the students' network, or set {PUBLIC_URL_ENV} to the address they can open.",
        )
    return StudentLink(
        f"{_with_host(teacher_url or 'http://localhost:8501', lan)}{base}/{query}",
        f"This computer's network address ({lan}), in place of '{host}', which would mean each student's own laptop. "
        f"Students on the same network open it; behind a proxy, a firewall or in a container, set {PUBLIC_URL_ENV} "
        "to the address they can open.",
        problem,
    )
