"""deploy/serve.py --self-signed: the pair it makes (names, usage), reuses and makes again, and what it says when it
cannot make one (issue #44.14, #50.6). No server."""

from __future__ import annotations

import json
import re
import subprocess
import time

import pytest

from deploy import serve
from deploy.serve import CannotMakeCertificate, certificate_names, fingerprint, self_signed_pair


def _openssl(cert, *args: str) -> str:
    return subprocess.run(["openssl", "x509", "-in", str(cert), "-noout", *args], capture_output=True, text=True).stdout


def test_the_pair_names_this_machine_and_serves_only_as_a_server(tmp_path):
    names = ["localhost", "127.0.0.1", "::1", "vm", "192.168.1.20"]
    cert, key, made = self_signed_pair(tmp_path / "tls", names)
    assert made
    san = _openssl(cert, "-ext", "subjectAltName")
    for entry in ("DNS:localhost", "IP Address:127.0.0.1", "DNS:vm", "IP Address:192.168.1.20"):
        assert entry in san
    usage = _openssl(cert, "-ext", "basicConstraints,extendedKeyUsage")
    assert "CA:FALSE" in usage and "TLS Web Server Authentication" in usage  # not a CA: nothing else trusts it
    assert (key.stat().st_mode & 0o777) == 0o600 and (key.parent.stat().st_mode & 0o777) == 0o700
    # the key matches the certificate
    pub = subprocess.run(["openssl", "pkey", "-in", str(key), "-pubout"], capture_output=True, text=True).stdout
    assert (
        pub
        == subprocess.run(
            ["openssl", "x509", "-in", str(cert), "-noout", "-pubkey"], capture_output=True, text=True
        ).stdout
    )
    # valid for a school year at least (exit 0: it does not expire within 360 days)
    assert (
        subprocess.run(["openssl", "x509", "-in", str(cert), "-noout", "-checkend", str(360 * 86400)]).returncode == 0
    )


def test_the_pair_is_reused_while_it_covers_the_names(tmp_path):
    folder = tmp_path / "tls"
    cert, _, _ = self_signed_pair(folder, ["localhost", "10.0.0.5"])
    first = cert.read_bytes()
    again, _, made = self_signed_pair(folder, ["10.0.0.5"])  # fewer names: still covered
    assert not made and again.read_bytes() == first  # no new warning page on the students' devices


def test_a_new_address_makes_one_pair_for_the_old_and_the_new(tmp_path):
    folder = tmp_path / "tls"
    cert, _, _ = self_signed_pair(folder, ["localhost", "10.0.0.5"])
    first = cert.read_bytes()
    cert, _, made = self_signed_pair(folder, ["localhost", "192.168.1.20"])  # the laptop on another network
    assert made and cert.read_bytes() != first
    san = _openssl(cert, "-ext", "subjectAltName")
    assert "IP Address:192.168.1.20" in san and "IP Address:10.0.0.5" in san  # back on the first: no new one
    assert not self_signed_pair(folder, ["10.0.0.5"])[2]


def test_a_pair_near_its_end_is_made_again(tmp_path):
    folder = tmp_path / "tls"
    self_signed_pair(folder, ["localhost"])
    info = folder / "self-signed.json"
    kept = json.loads(info.read_text())
    kept["until"] = time.time() + 5 * 86400  # five days left: it could expire in the middle of a course
    info.write_text(json.dumps(kept))
    assert self_signed_pair(folder, ["localhost"])[2]


def test_the_fingerprint_is_the_one_browsers_show(tmp_path):
    cert, _, _ = self_signed_pair(tmp_path / "tls", ["localhost"])
    shown = _openssl(cert, "-fingerprint", "-sha256").strip().split("=", 1)[1]
    assert fingerprint(cert) == shown


def test_without_openssl_python_makes_it_or_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setattr(serve.shutil, "which", lambda name: None if name == "openssl" else "/usr/bin/" + name)
    try:
        import cryptography  # noqa: F401
    except ImportError:
        with pytest.raises(CannotMakeCertificate) as err:
            self_signed_pair(tmp_path / "tls", ["localhost", "10.0.0.5"])
        message = str(err.value)
        assert "apt-get install openssl" in message and "pip install cryptography" in message
        assert "--cert FILE --key FILE" in message
        assert not (tmp_path / "tls" / "self-signed.crt").exists()
        return
    cert, _, made = self_signed_pair(tmp_path / "tls", ["localhost", "10.0.0.5"])
    assert made and "IP Address:10.0.0.5" in _openssl(cert, "-ext", "subjectAltName")


def test_the_certificate_names_this_machine():
    names = certificate_names("192.168.1.20", "0.0.0.0")
    assert names[:3] == ["localhost", "127.0.0.1", "::1"] and "192.168.1.20" in names and "0.0.0.0" not in names
    host = serve.socket.gethostname()
    assert (host in names) == bool(re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?", host))  # a DNS name only
    assert "10.0.0.7" in certificate_names(None, "10.0.0.7")  # a particular listening address
