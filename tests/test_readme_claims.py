"""The README's sentences about versions, the model package, the container's base and the test script, held to
the code they describe (issue #50: every sentence true)."""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def pinned(name: str) -> str:
    requirements = (ROOT / "requirements.txt").read_text(encoding="utf-8")
    return re.search(rf"^{name}==(\S+)$", requirements, re.MULTILINE).group(1)


def test_the_python_versions_said_are_the_pins_and_only_the_tested_one_is_called_tested():
    readme = one_line(README)
    assert "You need Python 3.11 or later (the pinned numpy and scipy need 3.11 or later)" in readme
    assert "The tests run on Python 3.11 on Debian 12 (Linux); no other Python version or system is tested" in readme
    assert "3.13 are tested" not in readme and "3.13" not in readme.split("## Serve a class")[0]
    for name in ("numpy", "scipy"):
        assert importlib.metadata.version(name) == pinned(name)
        assert importlib.metadata.metadata(name)["Requires-Python"].replace(" ", "") == ">=3.11"


def test_the_pages_said_to_need_the_model_package_are_the_ones_that_read_it():
    readme = one_line(README)
    assert (
        "*A real pretrained model* (`/pretrained`) and *The real model, read deeper* (`/pretrained_deeper`)" in readme
    )
    assert "on *Where is position?* (`/positions`) the real model's learned position table" in readme
    readers = {
        page.stem
        for page in (ROOT / "pages").glob("*.py")
        if re.search(r"\bui\.minilm\b|\battention\.pretrained\b", page.read_text(encoding="utf-8"))
    }
    assert readers == {"pretrained", "pretrained_deeper", "positions"}  # every other page works without it
    for page in ("pretrained", "pretrained_deeper"):  # the whole page stops after saying what to install
        source = (ROOT / "pages" / f"{page}.py").read_text(encoding="utf-8")
        assert re.search(r"except FileNotFoundError as err:.*\n\s+not_installed\(err, .*\)\n\s+stop\(\)", source)
    positions = (ROOT / "pages" / "positions.py").read_text(encoding="utf-8")
    shuffle_section = (ROOT / "ui" / "positions_shuffle.py").read_text(encoding="utf-8")  # the page's section 1
    assert "from ui.positions_shuffle import order_is_invisible" in positions
    assert "real = () if model is None else minilm_checks" in shuffle_section  # the check on the toy head only


def test_the_container_s_default_base_and_the_option_for_other_systems_are_the_scripts():
    readme = one_line(README)
    script = (ROOT / "deploy" / "image.sh").read_text(encoding="utf-8")
    assert "By default it builds on a Debian base it makes with `mmdebstrap`" in readme
    assert "pass `--base public` to build on the public `python:3.11-slim-bookworm` image" in readme
    assert "`--base IMAGE` for another base image" in readme
    assert re.search(r'build\(\) \{\n    local base="local"', script)  # local, made with mmdebstrap, by default
    assert "mmdebstrap --quiet" in script
    assert 'PUBLIC_BASE="docker.io/library/python:3.11-slim-bookworm"' in script
    assert 'public) base="$PUBLIC_BASE" ;;' in script
    assert '--build-arg "BASE=$base"' in script  # any other value is used as the base image itself


def test_the_test_script_needs_npm_and_does_not_install_it():
    readme = one_line(README)
    script = (ROOT / "scripts" / "test.sh").read_text(encoding="utf-8")
    assert "It also runs `npm ci` to install axe-core" in readme and "it does not install npm itself" in readme
    assert "npm ci" in script
    apt_tools = re.search(r"for tool in ([^;]+); do", script).group(1).split()
    assert "npm" not in apt_tools and "nodejs" not in apt_tools
    assert "npm is missing: the accessibility test (axe-core) will fail" in script
