"""The layering docs/ARCHITECTURE.md describes, checked on the source: rooms by job (subpackages, few top-level
modules, short import chains, no import cycle, function-level imports included), small modules and functions,
the trainer independent of the losses, and no loss named in the command line interface."""
import ast
import re

from svmstruct import registry

from conftest import ROOT

PACKAGE = ROOT / "svmstruct"


def module_name(path):
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def top_level_imports(inside_functions=False):
    """{module: modules of the package it imports at import time (module-level statements), or anywhere
    (inside functions too)}."""
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text())
        found = set()
        for node in _statements(tree, inside_functions):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name in modules}
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("svmstruct"):
                base = node.module
                for alias in node.names:
                    found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
        graph[name] = {m for m in found if m != name}
    return graph


def _statements(tree, inside_functions: bool):
    """The module's statements (with inside_functions: every node) but those under `if TYPE_CHECKING:`, which
    imports for annotations only and never runs."""
    typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                   and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING") for n in ast.walk(node)}
    nodes = ast.walk(tree) if inside_functions else tree.body
    return [node for node in nodes if id(node) not in typing_only]


def test_no_import_cycle():
    assert_acyclic(top_level_imports())


def test_no_import_cycle_even_inside_functions():
    """A function-level import that closes a circle is still a circle (the layering breaks at run time)."""
    assert_acyclic(top_level_imports(inside_functions=True))


def assert_acyclic(graph):
    state = {}

    def visit(node, path):
        state[node] = "active"
        for nxt in graph.get(node, ()):
            assert state.get(nxt) != "active", "import cycle: " + " -> ".join([*path, nxt])
            if nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = "done"

    for node in graph:
        if node not in state:
            visit(node, [node])


def reachable(graph, start):
    seen, todo = set(), [start]
    while todo:
        for nxt in graph.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def test_the_trainer_depends_on_the_problem_not_on_the_losses():
    graph = top_level_imports()
    for module in ("svmstruct.train.loop", "svmstruct.train.qp", "svmstruct.train.problem",
                   "svmstruct.train.loop_state", "svmstruct.train.line_search", "svmstruct.train.evaluator"):
        assert not any(m.startswith("svmstruct.losses") for m in reachable(graph, module)), module


def test_the_command_line_names_no_loss():
    """The loss options and their help come from the registry: no command spells a loss's name."""
    sources = [PACKAGE / "cli.py", *(PACKAGE / "commands").glob("*.py")]
    strings = {node.value for path in sources for node in ast.walk(ast.parse(path.read_text()))
               if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    names = {alias for loss in registry.REGISTRY.values() for alias in (loss.name, *loss.aliases)
             if not alias.isdigit()}
    assert not strings & names


def all_imports(path):
    """Every module of the package a source file imports, at any depth (function-level imports too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    return found


def test_the_cluster_knows_nothing_of_the_api_above_it():
    """distributed.py is a training source (ClusterSource) that training.train_grid trains on, not a pipeline."""
    assert not {m for m in all_imports(PACKAGE / "train" / "distributed.py") if m.startswith("svmstruct.api")}


def test_the_model_header_is_read_through_typed_fields_only():
    """Outside model.py no module touches Model.header: C, epsilon, normalize, scores, ... are its fields."""
    for path in PACKAGE.rglob("*.py"):
        if path.name == "model.py":
            continue
        uses = [node.lineno for node in ast.walk(ast.parse(path.read_text()))
                if isinstance(node, ast.Attribute) and node.attr == "header"]
        assert not uses, f"{path.name} reads .header at lines {uses}"


def longest_chain(graph) -> list:
    """The longest chain of imports (the graph has no cycle: test_no_import_cycle_even_inside_functions)."""
    memo: dict = {}

    def chain(node):
        if node not in memo:
            memo[node] = [node, *max((chain(m) for m in graph.get(node, ())), key=len, default=[])]
        return memo[node]

    return max((chain(node) for node in graph), key=len)


ENTRY_POINTS = ("svmstruct.__main__", "svmstruct.worker.warmup")  # run as programs (python -m), imported by none


def test_rooms_by_job():
    """At least four subpackages, at most 12 modules at the top, import chains of at most 8 modules below the
    entry points (which no module imports)."""
    subpackages = [p.parent for p in PACKAGE.glob("*/__init__.py")]
    top_level = list(PACKAGE.glob("*.py"))
    assert len(subpackages) >= 4 and len(top_level) <= 12, (subpackages, top_level)
    graph = top_level_imports(inside_functions=True)
    assert not [m for m, found in graph.items() if set(ENTRY_POINTS) & found]
    chain = longest_chain({m: found for m, found in graph.items() if m not in ENTRY_POINTS})
    assert len(chain) <= 8, " -> ".join(chain)


def room(module: str) -> str:
    """A module's room: its subpackage, or the top-level module itself."""
    return ".".join(module.split(".")[:2])


def test_no_cycle_between_rooms():
    """The graph of rooms (imports inside functions count, type-checking-only imports do not, the entry point
    and the package's own __init__ aside) has no cycle: every room stands on the ones below it."""
    rooms: dict = {}
    for module, found in top_level_imports(inside_functions=True).items():
        if module in ("svmstruct", "svmstruct.__main__"):
            continue
        rooms.setdefault(room(module), set()).update(room(m) for m in found if room(m) != room(module))
    assert_acyclic(rooms)


def test_modules_and_functions_stay_small():
    """No module over 600 lines; no function over 80 lines or with more than 8 parameters (numba kernels,
    whose arguments are the arrays they read, excepted)."""
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text()
        assert text.count("\n") <= 600, path
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            decorators = " ".join(ast.unparse(d) for d in node.decorator_list)
            if "jit" in decorators or "parallel_kernel" in decorators:
                continue
            a = node.args
            names = [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs if x.arg not in ("self", "cls")]
            count = len(names) + (a.vararg is not None) + (a.kwarg is not None)
            lines = node.end_lineno - node.lineno + 1
            assert lines <= 80 and count <= 8, f"{path.relative_to(ROOT)}:{node.lineno} {node.name}: " \
                                                f"{lines} lines, {count} parameters"


def test_the_worker_and_the_warm_up_read_one_complete_list_of_kernel_modules():
    """worker.preload.KERNEL_MODULES names every module that defines a numba kernel (decorated with a jit or
    parallel_kernel), and only those: the server loads their cached kernels, the warm-up says which hold none."""
    from svmstruct.worker import preload

    defining = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and any(
                    "jit" in ast.unparse(d) or "parallel_kernel" in ast.unparse(d) for d in node.decorator_list):
                defining.add(module_name(path))
    assert defining == set(preload.KERNEL_MODULES) and len(preload.KERNEL_MODULES) == len(defining)


def test_every_module_is_on_the_map():
    """docs/ARCHITECTURE.md's map names every module of the package (a room's modules by file name in its room's
    entry; a subpackage's __init__ by the room itself)."""
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    block = text[text.index("## Rooms by job"):text.index("## Where to make a change")]
    entries = re.split(r"\n(?=\S)", block)  # one entry a line that starts at the margin
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).parts
        if parts == ("__init__.py",):
            continue  # the package itself
        if len(parts) == 1:
            named = any(entry.startswith(parts[0]) for entry in entries)
        else:
            room = [entry for entry in entries if entry.startswith(parts[0] + "/")]
            named = bool(room) and (path.name == "__init__.py"
                                    or re.search(rf"\b{path.stem}\b", room[0]) is not None)
        if not named:
            missing.append(str(path.relative_to(PACKAGE)))
    assert not missing, missing


def test_no_test_module_imports_another():
    """Tests share helpers through conftest.py and helpers.py (and the toy modules), never through a test module."""
    found = []
    for path in sorted((ROOT / "tests").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            found += [f"{path.name}: {name}" for name in names if name.startswith("test_")]
    assert not found, found
