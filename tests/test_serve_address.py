"""deploy/serve.py: the address it tells the teacher to give the students (issue #44.4, #50.16), the public URL it
passes to the workers, and the database password it never prints. No server; no packet leaves the machine (the
route is asked of the kernel with a UDP socket, which sends nothing until written to)."""

from __future__ import annotations

import argparse
import socket
import subprocess

import pytest

from deploy.serve import parse_args, public_url_arg, redact, where_to_open, worker_env
from ui.student_link import LISTEN_ENV, OFF_NETWORK, PUBLIC_URL_ENV, lan_ip, listed_ips, reachable, route_ip


def test_the_route_is_found_without_a_connection():
    assert route_ip(("127.0.0.1", 9)) == "127.0.0.1"  # the loopback route's own address: nothing listens on 9
    assert route_ip(("::1", 9)) is None  # not an IPv4 address: no route, no exception


def test_the_default_route_gives_one_of_this_machines_addresses():
    ip = route_ip()  # the kernel's choice for a documentation address (RFC 5737), routed nowhere: nothing is sent
    if ip is None:  # a machine with no network at all
        assert lan_ip(listed=lambda: []) is None
        return
    assert ip in listed_ips() or ip in {a[4][0] for a in socket.getaddrinfo(socket.gethostname(), None)}
    assert ip != OFF_NETWORK[0]


def test_hostname_dash_i_is_what_the_machine_lists():
    out = subprocess.run(["hostname", "-I"], capture_output=True, text=True)
    if out.returncode == 0 and out.stdout.split():
        assert listed_ips() == out.stdout.split()
    else:  # no `hostname -I` (not Linux's hostname): the addresses the machine's name resolves to
        assert listed_ips() == [a[4][0] for a in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)]


def test_the_lan_address_is_the_routes_else_the_first_reachable_listed_one():
    listed = ["127.0.1.1", "169.254.7.7", "fd00::2", "10.1.2.3", "192.168.0.9"]
    assert lan_ip(route=lambda: "192.168.0.9", listed=lambda: pytest.fail("no need to list")) == "192.168.0.9"
    assert lan_ip(route=lambda: "127.0.0.1", listed=lambda: listed) == "10.1.2.3"  # a route by loopback only
    assert lan_ip(route=lambda: None, listed=lambda: listed) == "10.1.2.3"  # no route at all
    assert lan_ip(route=lambda: None, listed=lambda: ["127.0.0.1", "169.254.1.1"]) is None


def test_only_an_address_others_can_reach_is_given_to_students():
    assert reachable("192.168.1.20") and reachable("10.0.0.5")
    for ip in ("127.0.0.1", "127.0.1.1", "169.254.3.4", "0.0.0.0", "224.0.0.1", "::1", "", None, "vm"):
        assert not reachable(ip), ip


def test_every_interface_gives_the_students_the_lan_address_and_port():
    assert where_to_open("http", "0.0.0.0", 8501, None, "192.168.1.20") == [
        "give the students:  http://192.168.1.20:8501",
        "on this machine:    http://localhost:8501",
    ]
    https = where_to_open("https", "0.0.0.0", 443, None, "192.168.1.20")
    assert https[0] == "give the students:  https://192.168.1.20"  # the scheme's own port is left out
    assert where_to_open("https", "0.0.0.0", 8443, None, "10.0.0.5")[0] == "give the students:  https://10.0.0.5:8443"


def test_loopback_only_says_students_cannot_reach_it_and_how_to_fix_it():
    for address in ("127.0.0.1", "localhost", "::1"):
        lines = where_to_open("http", address, 8501, None, "192.168.1.20")
        assert lines[0] == "on this machine:    http://localhost:8501"
        assert lines[1].startswith(f"students cannot reach it: it listens on {address} only")
        assert "without --address" in lines[1] and "--public-url" in lines[1]
        assert "192.168.1.20" not in " ".join(lines)


def test_a_public_url_is_what_students_are_given():
    lines = where_to_open("http", "127.0.0.1", 8501, "https://attention.example.org", "192.168.1.20")
    assert lines == [
        "give the students:  https://attention.example.org  (--public-url)",
        "on this machine:    http://localhost:8501",
    ]
    assert "cannot reach" not in " ".join(lines)  # a proxy on this machine reaches it on loopback


def test_a_particular_address_is_given_as_it_is():
    assert where_to_open("http", "192.168.1.20", 8501, None, "10.0.0.5") == [
        "give the students:  http://192.168.1.20:8501",
        "on this machine:    http://192.168.1.20:8501",  # nginx listens there only: localhost would not answer
    ]


def test_no_network_and_a_container_say_what_to_give_instead():
    alone = where_to_open("http", "0.0.0.0", 8501, None, None)
    assert "no network address was found" in alone[0] and "<this machine's address>:8501" in alone[0]
    boxed = where_to_open("http", "0.0.0.0", 8501, None, "10.88.0.5", container=True)
    assert boxed[0].startswith("give the students:  the host's address and the port it publishes")
    assert "http://10.88.0.5:8501 if the container shares the host's network" in boxed[0]
    assert f"-e {PUBLIC_URL_ENV}=" in boxed[1]


def test_the_public_url_is_checked_and_comes_from_the_environment_too(monkeypatch):
    assert public_url_arg(" https://attention.example.org/ ") == "https://attention.example.org"
    assert public_url_arg("http://10.0.0.5:8080/attention/") == "http://10.0.0.5:8080/attention"
    for bad in ("attention.example.org", "ftp://x.org", "https://", "https://x.org/?room=1"):
        with pytest.raises(argparse.ArgumentTypeError):
            public_url_arg(bad)
    assert parse_args([]).public_url is None
    monkeypatch.setenv(PUBLIC_URL_ENV, "https://class.example.org/")
    assert parse_args([]).public_url == "https://class.example.org"
    assert parse_args(["--public-url", "http://10.0.0.5:8501"]).public_url == "http://10.0.0.5:8501"


def test_the_workers_get_nginx_address_and_the_public_url_only_when_it_is_given():
    base = {"PATH": "/bin", PUBLIC_URL_ENV: "http://stale.example.org"}
    env = worker_env(base, "s3cret", "0.0.0.0", "https://class.example.org")
    assert env[PUBLIC_URL_ENV] == "https://class.example.org" and env["STREAMLIT_SERVER_COOKIE_SECRET"] == "s3cret"
    assert env[LISTEN_ENV] == "0.0.0.0"  # where the class connects, not the worker's own 127.0.0.1
    assert PUBLIC_URL_ENV not in worker_env(base, "s3cret", "0.0.0.0", None)  # the app makes links from its address
    assert base[PUBLIC_URL_ENV] == "http://stale.example.org"  # the caller's environment is left alone


def test_behind_nginx_on_every_interface_the_class_page_does_not_think_its_server_is_loopback_only():
    from ui import student_link

    link = student_link.student_link("http://localhost:8501/class", {"room": "K7QX"}, listen="0.0.0.0", lan="10.0.0.5")
    assert link.problem is None and link.url.startswith("http://10.0.0.5:8501/")


def test_https_options_go_together(tmp_path):
    for argv in (["--cert", "x.pem"], ["--key", "k.pem"]):
        with pytest.raises(SystemExit):
            parse_args(argv)
    pem = tmp_path / "c.pem"
    pem.write_text("x")
    with pytest.raises(SystemExit):
        parse_args(["--self-signed", "--cert", str(pem), "--key", str(pem)])
    with pytest.raises(SystemExit):
        parse_args(["--cert", str(pem), "--key", str(tmp_path / "missing.pem")])
    assert parse_args(["--cert", str(pem), "--key", str(pem)]).cert == str(pem)


def test_a_database_password_is_never_shown():
    url = "postgresql+psycopg://u:secretpw@db.example.org:5432/attention"
    said = "cannot use postgresql+psycopg://u:secretpw@db.example.org:5432/attention: password secretpw rejected"
    assert "secretpw" not in redact(said, url) and ":***@db.example.org" in redact(said, url)
    encoded = "postgresql://u:p%40ss%3Aword@h/db"  # "p@ss:word", percent-encoded in the URL
    assert redact("failed for p@ss:word and p%40ss%3Aword", encoded) == "failed for *** and ***"
    short = "postgresql://u:ab@h/db"  # too short to hide everywhere: only where it sits in a URL
    assert redact("postgresql://u:ab@h/db: a table", short) == "postgresql://u:***@h/db: a table"
    assert redact("nothing to hide", "sqlite:////tmp/x.db") == "nothing to hide"
