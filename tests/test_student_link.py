"""The student link a teacher projects must open on the students' laptops (ui/student_link.py): never a loopback
address when another is known, the public address when one is configured, and a plain warning otherwise. No test
sends traffic anywhere: the machine's own address is found by a UDP socket's connect(), which sends nothing."""

from __future__ import annotations

import socket

import pytest

from ui.student_link import OFF_NETWORK, is_loopback, lan_ip, student_link

PARAMS = {"room": "K7PX3M", "join": "tok"}


@pytest.mark.parametrize("teacher", ["http://localhost:8501/class", "http://127.0.0.1:8501/", "http://[::1]:8501/x"])
def test_a_teacher_on_localhost_projects_this_machines_network_address(teacher):
    link = student_link(teacher, PARAMS, lan="192.168.1.23")
    assert link.url == "http://192.168.1.23:8501/?room=K7PX3M&join=tok"
    assert "192.168.1.23" in link.note and link.problem is None


def test_a_teacher_on_the_network_address_projects_it_as_is():
    link = student_link("https://class.school.example:8443/class?present=1", PARAMS, lan="10.0.0.2")
    assert link.url == "https://class.school.example:8443/?room=K7PX3M&join=tok" and link.problem is None


def test_the_public_address_wins_behind_a_proxy_or_in_a_container():
    link = student_link(
        "http://localhost:8501/", PARAMS, public_url="https://attention.example.org/app/", lan="10.0.0.2"
    )
    assert link.url == "https://attention.example.org/app/?room=K7PX3M&join=tok" and link.problem is None
    bad = student_link("http://localhost:8501/", PARAMS, public_url="ftp://x", lan="10.0.0.2")
    assert bad.url.startswith("http://10.0.0.2:8501/") and "not an http(s) address" in bad.problem


def test_with_no_other_address_or_a_loopback_only_server_the_page_says_students_cannot_open_it():
    alone = student_link("http://localhost:8501/", PARAMS, lan=None)
    assert alone.url.startswith("http://localhost:8501/") and "each student's own laptop" in alone.problem
    local = student_link("http://localhost:8501/", PARAMS, listen="127.0.0.1", lan="192.168.1.23")
    assert "listens on this computer only" in local.problem


def test_the_apps_base_path_is_kept():
    link = student_link("http://localhost:8501/attn/class", PARAMS, base_path="attn", lan="192.168.1.23")
    assert link.url == "http://192.168.1.23:8501/attn/?room=K7PX3M&join=tok"


def test_loopback_names_and_addresses():
    assert all(is_loopback(h) for h in ("localhost", "127.0.0.1", "127.5.5.5", "::1", "[::1]", "a.localhost"))
    assert not any(is_loopback(h) for h in ("192.168.1.2", "class.example", "10.0.0.1", "::ffff:10.0.0.1"))


def test_the_machines_address_is_found_without_sending_anything(monkeypatch):
    sent = []

    class Probe(socket.socket):
        def connect(self, address):
            sent.append(address)
            return super().connect(address)

        def sendto(self, *args):  # pragma: no cover - would be a failure
            raise AssertionError("nothing may be sent")

        send = sendall = sendto

    monkeypatch.setattr(socket, "socket", Probe)
    found = lan_ip(listed=lambda: [])
    assert sent == [OFF_NETWORK]  # a documentation address: routed, never contacted (UDP connect sends nothing)
    assert found is None or not is_loopback(found)
