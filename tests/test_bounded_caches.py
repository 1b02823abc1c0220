"""Every module of app.py, pages/, ui/, figures/, lessons/, attention/ and classroom/: every cache has a bound (issue
#34, item 7): a server that runs for weeks must not grow with every new input a student types.

A cache counts as bounded when it names its size (st.cache_data / st.cache_resource with max_entries, an
lru_cache with a maxsize that is not None), or when its function takes no argument (one entry at most). A
module-level dict or list that functions fill is a cache too: it needs a `# bounded: <why>` comment on its line.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ["app.py", "pages", "ui", "figures", "lessons", "attention", "classroom"]
GROWING_CALLS = {"append", "setdefault", "update", "extend", "insert", "add"}


def python_files() -> list[Path]:
    files = []
    for name in SCANNED:
        path = ROOT / name
        files += [path] if path.is_file() else sorted(path.rglob("*.py"))
    return files


def _name(node: ast.AST) -> str:
    """'st.cache_data', 'functools.lru_cache', 'cache'... for a decorator's callee."""
    if isinstance(node, ast.Call):
        node = node.func
    return ast.unparse(node)


def _keyword(node: ast.AST, name: str) -> ast.expr | None:
    if isinstance(node, ast.Call):
        for kw in node.keywords:
            if kw.arg == name:
                return kw.value
    return None


def unbounded_decorator(decorator: ast.expr) -> str | None:
    """Why this decorator makes an unbounded cache, or None."""
    name = _name(decorator).split(".")[-1]
    if name in ("cache_data", "cache_resource"):
        return None if _keyword(decorator, "max_entries") is not None else f"{name} without max_entries"
    if name == "cache":
        return "functools.cache (no size)"
    if name == "lru_cache":
        if not isinstance(decorator, ast.Call):
            return None  # the bare decorator: maxsize 128
        size = _keyword(decorator, "maxsize") or (decorator.args[0] if decorator.args else None)
        if isinstance(size, ast.Constant) and size.value is None:
            return "lru_cache(maxsize=None)"
    return None


def takes_arguments(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    a = fn.args
    return bool(a.posonlyargs or a.args or a.kwonlyargs or a.vararg or a.kwarg)


def module_level_stores(tree: ast.Module, lines: list[str]) -> dict[str, int]:
    """Module-level names bound to an empty dict or list with no `# bounded:` comment: name -> line."""
    out = {}
    for node in tree.body:
        targets, value = [], None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        empty = (
            (isinstance(value, ast.Dict) and not value.keys)
            or (isinstance(value, ast.List) and not value.elts)
            or (isinstance(value, ast.Call) and _name(value) in ("dict", "list", "OrderedDict", "defaultdict"))
        )
        if not empty or "# bounded:" in lines[node.lineno - 1]:
            continue
        for target in targets:
            if isinstance(target, ast.Name):
                out[target.id] = node.lineno
    return out


def grown_in_functions(tree: ast.Module, names: set[str]) -> set[str]:
    """Which of `names` some function fills: `NAME[k] = v`, `NAME.append(...)`, `NAME.setdefault(...)`..."""
    grown = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            if isinstance(node, (ast.Assign, ast.AugAssign)):
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                        grown.add(target.value.id)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr in GROWING_CALLS and isinstance(node.func.value, ast.Name):
                    grown.add(node.func.value.id)
    return grown & names


def unbounded_caches(path: Path, root: Path = ROOT) -> list[str]:
    """Each unbounded cache in `path` as 'file:line: what'."""
    source = path.read_text()
    tree, lines = ast.parse(source), source.splitlines()
    where = path.relative_to(root)
    found = []
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and takes_arguments(fn):
            for decorator in fn.decorator_list:
                why = unbounded_decorator(decorator)
                if why:
                    found.append(f"{where}:{decorator.lineno}: {fn.name}: {why}")
    stores = module_level_stores(tree, lines)
    for name in sorted(grown_in_functions(tree, set(stores))):
        found.append(f"{where}:{stores[name]}: module-level {name} is filled by functions and has no '# bounded:' note")
    return found


def test_every_cache_in_the_app_has_a_bound():
    found = [problem for path in python_files() for problem in unbounded_caches(path)]
    assert found == [], "unbounded caches:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "source, flagged",
    [
        ("import streamlit as st\n@st.cache_data(show_spinner=False)\ndef f(x):\n    return x\n", True),
        ("import streamlit as st\n@st.cache_data\ndef f(x):\n    return x\n", True),
        ("import streamlit as st\n@st.cache_resource(max_entries=4)\ndef f(x):\n    return x\n", False),
        ("import streamlit as st\n@st.cache_resource\ndef f():\n    return 1\n", False),  # one entry at most
        ("import functools\n@functools.cache\ndef f(x):\n    return x\n", True),
        ("from functools import cache\n@cache\ndef f(x):\n    return x\n", True),
        ("from functools import lru_cache\n@lru_cache(maxsize=None)\ndef f(x):\n    return x\n", True),
        ("from functools import lru_cache\n@lru_cache(None)\ndef f(x):\n    return x\n", True),
        ("from functools import lru_cache\n@lru_cache(maxsize=8)\ndef f(x):\n    return x\n", False),
        ("SEEN = {}\ndef f(x):\n    SEEN[x] = 1\n", True),
        ("SEEN: dict[str, int] = dict()\ndef f(x):\n    SEEN.setdefault(x, 1)\n", True),
        ("LOG = []\ndef f(x):\n    LOG.append(x)\n", True),
        ("LOG = []  # bounded: popped by the same call\ndef f(x):\n    LOG.append(x)\n", False),
        ("TABLE = {}\nTABLE['a'] = 1\n", False),  # filled once at import, not by calls
    ],
)
def test_the_scan_finds_an_unbounded_cache_and_names_its_line(tmp_path, source, flagged):
    path = tmp_path / "mod.py"
    path.write_text(source)
    found = unbounded_caches(path, tmp_path)
    assert bool(found) == flagged, found
    if flagged:
        assert found[0].startswith("mod.py:")  # the file and line, for the person who fixes it
