"""The core's boundary: no UI libraries imported, and every public function keeps float32."""

import ast
import inspect
import pkgutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import attention

ROOT = Path(__file__).resolve().parents[1]
UI_LIBRARIES = ("streamlit", "plotly")


def run_fresh(code: str) -> str:
    """Run python `code` in a fresh interpreter from the repository root; return what it prints."""
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_importing_attention_loads_neither_streamlit_nor_plotly():
    code = f"import attention, sys; print(sorted(m for m in sys.modules if m.split('.')[0] in {UI_LIBRARIES!r}))"
    assert run_fresh(code) == "[]"


def test_no_core_module_loads_streamlit_or_plotly():
    # One interpreter imports the modules one by one and names the first that pulls a UI library in.
    modules = sorted(m.name for m in pkgutil.iter_modules(attention.__path__))
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module('attention.' + name)\n"
        f"    ui = sorted(m for m in sys.modules if m.split('.')[0] in {UI_LIBRARIES!r})\n"
        "    if ui:\n"
        "        print(f'attention.{name} loads {ui}'); break\n"
    )
    assert run_fresh(code) == ""


def test_the_mechanism_never_imports_the_lessons():
    # Imports point one way: lessons -> attention. Importing every core module must not load `lessons`.
    modules = sorted(m.name for m in pkgutil.iter_modules(attention.__path__))
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module('attention.' + name)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('lessons', 'ui', 'figures', 'pages')))\n"
    )
    assert run_fresh(code) == "[]"


def test_no_lesson_module_loads_streamlit_or_plotly():
    import lessons

    modules = sorted(m.name for m in pkgutil.iter_modules(lessons.__path__))
    assert {"examples", "pitfalls", "puzzles", "head_library", "scaling", "training"} <= set(modules)
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module('lessons.' + name)\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {UI_LIBRARIES!r}))\n"
    )
    assert run_fresh(code) == "[]"


def float32_calls():
    """One float32 call of every public function, by name."""
    rng = np.random.default_rng(0)
    f32 = lambda *shape: rng.standard_normal(shape).astype(np.float32)  # noqa: E731
    x, w = f32(2, 4, 6), f32(6, 6)
    params = attention.BlockParams.random(6, 8, rng, dtype=np.float32)
    return {
        "softmax": lambda: attention.softmax(f32(3, 5)),
        "scaled_dot_product_attention": lambda: attention.scaled_dot_product_attention(f32(4, 3), f32(5, 3), f32(5, 2)),
        "attention_steps": lambda: attention.attention_steps(f32(4, 3), f32(5, 3), f32(5, 2), causal=True).output,
        "split_heads": lambda: attention.split_heads(x, 3),
        "merge_heads": lambda: attention.merge_heads(f32(3, 4, 2)),
        "multi_head_attention": lambda: attention.multi_head_attention(x, w, w, w, w, 2),
        "multi_head_steps": lambda: attention.multi_head_steps(x, w, w, w, w, 2).output,
        "layer_norm": lambda: attention.layer_norm(x, np.ones(6), np.zeros(6)),
        "relu": lambda: attention.relu(x),
        "gelu": lambda: attention.gelu(x),
        "feed_forward": lambda: attention.feed_forward(x, f32(6, 8), f32(8), f32(8, 6), f32(6)),
        "feed_forward_steps": lambda: attention.feed_forward_steps(x, f32(6, 8), f32(8), f32(8, 6), f32(6)),
        "transformer_block": lambda: attention.transformer_block(x, params, 2),
        "rope": lambda: attention.rope(x),
        "padded_attention": lambda: attention.padded_attention(x, x, x, [4, 2], causal=True),
    }


# bool masks, lists of ints, and tables built from sizes alone: no float input whose dtype to keep
NOT_ARRAY_FUNCTIONS = {
    "causal_mask",
    "divisors",
    "sliding_window_mask",
    "padding_mask",
    "sinusoidal_encoding",
    "alibi_slopes",
    "alibi_bias",
}


def test_every_public_function_is_covered_by_the_float32_check():
    public = {name for name in attention.__all__ if inspect.isfunction(getattr(attention, name))}
    assert public - NOT_ARRAY_FUNCTIONS == set(float32_calls())


@pytest.mark.parametrize("name", sorted(float32_calls()))
def test_float32_in_float32_out(name):
    results = float32_calls()[name]()
    for result in results if isinstance(results, tuple) else (results,):
        arrays = [result] if isinstance(result, np.ndarray) else [result.weights]  # a BlockTrace
        for array in arrays:
            assert array.dtype == np.float32, f"{name} returned {array.dtype}"


def test_no_public_function_shadows_a_module_of_the_package():
    # `attention.softmax` once named both a module and the function the package exports, so
    # `import attention.softmax as m` gave the function; the same held for feed_forward.
    modules = {m.name for m in pkgutil.iter_modules(attention.__path__)}
    assert modules.isdisjoint(attention.__all__)


def ui_import_graph() -> dict[str, set[str]]:
    """ui's modules and the ui modules each imports, anywhere in it (a function's own imports included); importing
    a module of a package imports the package too."""
    modules = {}
    for path in sorted((ROOT / "ui").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph = {}
    for name, path in modules.items():
        targets = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
            elif isinstance(node, ast.Import):
                targets |= {a.name for a in node.names}
        with_packages = {".".join(t.split(".")[:i]) for t in targets for i in range(2, t.count(".") + 2)}
        graph[name] = {t for t in with_packages if t in modules and t != name}
    return graph


def import_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of `graph` (as the list of modules around it), or None."""
    done, path = set(), []

    def visit(node: str) -> list[str] | None:
        if node in path:
            return path[path.index(node) :] + [node]
        if node in done:
            return None
        path.append(node)
        for target in sorted(graph[node]):
            cycle = visit(target)
            if cycle:
                return cycle
        path.pop()
        done.add(node)
        return None

    for node in sorted(graph):
        cycle = visit(node)
        if cycle:
            return cycle
    return None


def test_ui_has_no_import_cycle():
    graph = ui_import_graph()
    assert {"ui.page_state", "ui.sequence_editor", "ui.presenter", "ui.state"} <= set(graph)
    assert "ui.sequence_state" in graph["ui.page_state"], "the graph sees the imports"
    cycle = import_cycle(graph)
    assert cycle is None, " -> ".join(cycle)


def test_the_cycle_finder_finds_a_cycle():
    assert import_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert import_cycle({"a": {"b"}, "b": set()}) is None


def test_bench_never_imports_the_tests():
    """Tests may import bench (the server start-up, the load test's plan); bench imports nothing from tests."""
    found = []
    for path in sorted((ROOT / "bench").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            names += [a.name for a in node.names] if isinstance(node, ast.Import) else []
            found += [f"{path.relative_to(ROOT)}: {n}" for n in names if n.split(".")[0] == "tests"]
            text = node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""
            if "tests/browser/conftest" in text:
                found.append(f"{path.relative_to(ROOT)}: loads {text}")
    assert not found


def missing_imports(paths, root: Path = ROOT) -> list[str]:
    """Every `from package.module import name` in `paths` (the project's own packages) whose name the module
    does not have, as 'file:line: module.name' (the file relative to `root`)."""
    import importlib

    own = {"attention", "lessons", "figures", "ui", "classroom"}
    found = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] in own:
                module = importlib.import_module(node.module)
                for alias in node.names:
                    if not hasattr(module, alias.name):
                        try:
                            importlib.import_module(f"{node.module}.{alias.name}")  # a submodule
                        except ImportError:
                            found.append(f"{path.relative_to(root)}:{node.lineno}: {node.module}.{alias.name}")
    return found


def test_every_name_a_page_or_the_app_imports_exists():
    """A page imports only what its modules hold: a name moved to another module (as a merge once left
    `is_presenting` imported from ui.presenter) fails here, without running the page."""
    paths = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py")), *sorted((ROOT / "ui").rglob("*.py"))]
    assert missing_imports(paths) == []


def test_the_import_check_finds_a_moved_name(tmp_path):
    page = tmp_path / "page.py"
    page.write_text("from ui.presenter import is_presenting_nowhere\nfrom ui.state import is_presenting\n")
    assert missing_imports([page], tmp_path) == ["page.py:1: ui.presenter.is_presenting_nowhere"]
