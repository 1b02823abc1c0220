"""The container image (deploy/Dockerfile), built and run here by deploy/image.sh with podman (or docker).

Built on the local Debian base (mmdebstrap; cached per machine, so only the first run pays for it) and run
with its port published on 127.0.0.1: its health check answers, a page renders in Chromium through the
port, and SIGTERM stops it within the engine's 10 s grace. scripts/test.sh installs podman, runc and
mmdebstrap; without an engine the tests fail where browser tests are required, and are skipped elsewhere.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import urllib.request

import pytest
from playwright.sync_api import expect

from harness.servers import ROOT, free_port
from tests.browser.conftest import WAIT_MS, assert_no_exception, browser_required, wait_idle

IMAGE_SH = ROOT / "deploy" / "image.sh"


def _engine() -> str | None:
    if os.environ.get("ENGINE"):
        return os.environ["ENGINE"]
    if shutil.which("docker") and subprocess.run(["docker", "info"], capture_output=True).returncode == 0:
        return "docker"
    return "podman" if shutil.which("podman") else None


def image_sh(*args: str, timeout: float = 120) -> dict[str, str]:
    """Run deploy/image.sh; return its `key=value` lines (its progress goes to stderr)."""
    out = subprocess.run(["bash", str(IMAGE_SH), *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    assert out.returncode == 0, f"image.sh {' '.join(args)} failed:\n{out.stderr[-4000:]}"
    return dict(line.split("=", 1) for line in out.stdout.splitlines() if "=" in line)


def _env(engine: str) -> dict:
    env = {**os.environ}
    if engine == "podman":
        env.setdefault("CONTAINERS_CONF", str(ROOT / "deploy" / "containers.conf"))  # as image.sh runs it
    return env


def engine_run(engine: str, *args: str) -> str:
    out = subprocess.run([engine, *args], capture_output=True, text=True, env=_env(engine), timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


@pytest.fixture(scope="module")
def engine():
    found = _engine()
    if found is None or (found == "podman" and not shutil.which("mmdebstrap")):
        message = "no container engine with mmdebstrap here (scripts/test.sh installs podman, runc and mmdebstrap)"
        if browser_required():
            pytest.fail(message)
        pytest.skip(message)
    return found


@pytest.fixture(scope="module")
def built(engine):
    """The image, built on the local Debian base (the base is made once per machine, then cached)."""
    return image_sh("build", "--base", "local", timeout=1800)


@pytest.fixture(scope="module")
def container(engine, built):
    name, port = f"attention-test-{os.getpid()}", free_port()
    started = image_sh("start", name, str(port), timeout=300)
    yield {"name": name, "url": started["url"], "engine": engine, **built}
    subprocess.run([engine, "rm", "-f", name], capture_output=True, env=_env(engine), timeout=120)


def test_the_image_holds_the_app_in_a_venv_on_debians_python_as_an_ordinary_user(container):
    assert container["base"].startswith("localhost/attention-base:bookworm-")
    image, engine = container["image"], container["engine"]
    assert engine_run(engine, "image", "inspect", "-f", "{{.Config.User}}", image) == "app"
    healthcheck = engine_run(engine, "image", "inspect", "-f", "{{json .Config.Healthcheck}}", image)
    assert "/healthz" in healthcheck  # kept: podman builds in docker format
    said = engine_run(
        engine,
        "run",
        "--rm",
        image,
        "python",
        "-c",
        "import sys, streamlit, numpy; print(sys.prefix, sys.base_prefix, streamlit.__version__, sep='|')",
    )
    prefix, base_prefix, version = said.splitlines()[-1].split("|")
    assert prefix == "/opt/venv" and base_prefix == "/usr"  # a venv over Debian's own Python
    assert f"streamlit=={version}" in (ROOT / "requirements.txt").read_text()


def test_its_health_check_answers(container):
    with urllib.request.urlopen(container["url"] + "/healthz", timeout=10) as r:
        assert r.status == 200 and r.read() == b"ok"
    assert image_sh("healthcheck", container["name"])["healthcheck"] == "ok"  # the image's own HEALTHCHECK


def test_a_page_renders_in_chromium_through_its_port(container, browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = ctx.new_page()
        page.set_default_timeout(WAIT_MS)
        page.goto(container["url"] + "/heads")
        wait_idle(page, timeout=120_000)  # the container's first run imports the app
        expect(page.locator('[data-testid="stMain"] h1').first).to_have_text("Multi-head attention")
        expect(page.locator('[data-testid="stPlotlyChart"] .js-plotly-plot').first).to_be_attached()
        assert_no_exception(page)
    finally:
        ctx.close()


def test_sigterm_stops_it_within_the_engines_grace(container):
    """`stop` sends SIGTERM and kills after 10 s: exit code 0 means the supervisor stopped nginx and the
    worker and exited by itself, inside the grace (a kill would leave 137)."""
    stopped = image_sh("stop", container["name"], timeout=120)
    assert stopped["exit_code"] == "0", stopped


def test_the_apps_modules_are_compiled_at_build_time(container):
    # The image sets PYTHONDONTWRITEBYTECODE: without the build's compileall, every worker would compile the
    # app's modules again at its first visit. `python -v` says which file an import read, and whether the
    # compiled file matched its source (a stale one is compiled again, not read).
    said = engine_run(
        container["engine"],
        "run",
        "--rm",
        container["image"],
        "sh",
        "-c",
        "python -v -c 'import ui.charts' 2>&1 | grep -F 'ui/__pycache__/charts.' || true",
    )
    assert "matches /app/ui/charts.py" in said, said
    assert "code object from '/app/ui/__pycache__/charts." in said, said
