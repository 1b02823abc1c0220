"""The product's imports: attention/ imports no UI library and no lesson, no module imports another in a circle,
harness/ and bench/ never import tests/, harness/ never imports bench/, every imported name exists; and every
public function of attention/ keeps float32."""

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

    found = pkgutil.walk_packages(lessons.__path__, "lessons.")
    modules = sorted(m.name.removeprefix("lessons.") for m in found if not m.ispkg)
    assert {"examples", "pitfalls", "puzzles", "scaling", "positions.toy", "positions.masks"} <= set(modules)
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


# Every module of the product: a circle among them (even one held apart by an import inside a function) means
# that neither module can be read, tested or moved without the other.
PRODUCT = (
    "app.py", "attention", "locales", "lessons", "figures", "ui", "classroom", "pages", "harness", "bench", "deploy"
)  # fmt: skip


def module_files(root: Path = ROOT, product=PRODUCT) -> dict[str, Path]:
    """Every module of `product` (files and folders under `root`) by its dotted name; a package by its own name."""
    modules = {}
    for name in product:
        for path in [root / name] if name.endswith(".py") else sorted((root / name).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def imported_modules(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The product modules that module `name` (at `path`) imports anywhere in it, a function's own imports included:
    relative imports resolved, `from package import submodule` as the submodule, a bench script's `from _threads
    import ...` (its folder is on sys.path) as its sibling, and with each the packages above it that hold not
    `name` itself (those are already being imported when `name` is)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    folder = package.split(".") if package else []
    targets = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                module = ".".join(p for p in (".".join(folder[: len(folder) - node.level + 1]), module) if p)
            found = {f"{module}.{a.name}" if f"{module}.{a.name}" in modules else module for a in node.names}
        elif isinstance(node, ast.Import):
            found = {a.name for a in node.names}
        else:
            continue
        for target in found:
            sibling = ".".join([*folder, target])
            targets.add(sibling if target.split(".")[0] not in modules and sibling in modules else target)
    own = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}  # the packages holding `name`
    with_packages = {".".join(t.split(".")[:i]) for t in targets for i in range(1, t.count(".") + 2)}
    return {t for t in with_packages - own if t in modules and t != name} | (targets & own)


def import_graph(root: Path = ROOT, product=PRODUCT) -> dict[str, set[str]]:
    """The product's modules and the product modules each imports."""
    modules = module_files(root, product)
    return {name: imported_modules(name, path, modules) for name, path in modules.items()}


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


def test_the_product_has_no_import_cycle():
    graph = import_graph()
    assert {"ui.page_state", "ui.sequence_editor", "ui.presenter", "ui.shared_state", "app", "harness.load.run"} <= set(
        graph
    )
    assert "ui.sequence_reset" in graph["ui.page_state"], "the graph sees the imports"
    assert "attention.masks" in graph["attention.dot_product"], "and the relative ones"
    assert "harness.machine" in graph["bench.bench_decoder"], "and a bench script's import of the harness"
    assert "ui.streamlit_internals.server" in graph["ui.streamlit_internals"], "and those inside a function"
    cycle = import_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


# Imports point one way (the layout of the conventions): a module imports its own package and those of lower layers.
LAYERS = {"attention": 0, "lessons": 1, "classroom": 1, "figures": 2, "ui": 3, "pages": 4, "app": 4}
LAYERS |= {"locales": 0}  # the translations: what the lessons, figures and screens say, in the session's language
# harness and deploy run the app; bench runs it through the harness. Tests may import all three; none imports tests.
LAYERS |= {"harness": 5, "deploy": 5, "bench": 6}


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every import of `graph` from one top-level package into another of the same or a higher layer."""
    found = []
    for name, targets in sorted(graph.items()):
        for target in sorted(targets):
            here, there = name.split(".")[0], target.split(".")[0]
            if here != there and LAYERS[there] >= LAYERS[here]:
                found.append(f"{name} imports {target}")
    return found


# The one exception: `python -m classroom.decks check` checks a lesson file against the pages' declarations, as the
# app does when a teacher loads it; its main() imports them, and the rest of classroom.decks is given them.
COMMAND_LINE = ["classroom.decks imports ui", "classroom.decks imports ui.declared"]


def test_the_imports_point_one_way():
    graph = import_graph()
    assert set(LAYERS) == {name.split(".")[0] for name in graph}, "every top-level package has its layer"
    assert upward_imports(graph) == COMMAND_LINE


def test_an_upward_import_is_found():
    graph = {"lessons.x": {"attention.y"}, "attention.y": {"figures.z"}, "figures.z": set()}
    graph["classroom.c"] = {"lessons.x"}
    assert upward_imports(graph) == ["attention.y imports figures.z", "classroom.c imports lessons.x"]


def test_the_graph_finds_a_circle_held_apart_by_an_import_inside_a_function(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "a.py").write_text("from .b import f\n")
    (tmp_path / "pkg" / "b.py").write_text("def f():\n    from pkg.a import g\n")
    graph = import_graph(tmp_path, ("pkg",))
    assert graph == {"pkg": set(), "pkg.a": {"pkg.b"}, "pkg.b": {"pkg.a"}}
    assert import_cycle(graph) == ["pkg.a", "pkg.b", "pkg.a"]


def test_the_cycle_finder_finds_a_cycle():
    assert import_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert import_cycle({"a": {"b"}, "b": set()}) is None


def test_the_harness_and_bench_never_import_the_tests():
    """Tests may import the harness (the server start-up, the load test's plan) and bench (a script's verdict);
    neither imports anything from tests."""
    found = []
    for path in sorted([*(ROOT / "harness").rglob("*.py"), *(ROOT / "bench").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            names += [a.name for a in node.names] if isinstance(node, ast.Import) else []
            found += [f"{path.relative_to(ROOT)}: {n}" for n in names if n.split(".")[0] == "tests"]
            text = node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""
            if "tests/browser/conftest" in text:
                found.append(f"{path.relative_to(ROOT)}: loads {text}")
    assert not found


def test_the_harness_never_imports_bench():
    """bench/ (scripts that print figures) imports the harness; the harness, which the tests use, imports no script."""
    graph = import_graph()
    assert {"harness.servers", "harness.protocol", "harness.load.run", "bench.load.classroom"} <= set(graph)
    assert "harness.load.run" in graph["bench.load_test"], "the graph sees bench import the harness"
    found = [f"{name} imports {target}" for name, targets in sorted(graph.items()) for target in sorted(targets)]
    assert [f for f in found if f.startswith("harness") and " imports bench" in f] == []


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
    page.write_text("from ui.presenter import is_presenting_nowhere\nfrom ui.shared_state import is_presenting\n")
    assert missing_imports([page], tmp_path) == ["page.py:1: ui.presenter.is_presenting_nowhere"]
