"""The layering docs/ARCHITECTURE.md describes, checked on the source: no import cycle among the package's
modules (at import time), the trainer independent of the losses, and no loss named in cli.py."""
import ast

from svmstruct import losses

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
        for node in ast.walk(tree) if inside_functions else tree.body:
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name in modules}
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("svmstruct"):
                base = node.module
                for alias in node.names:
                    found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
        graph[name] = {m for m in found if m != name}
    return graph


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
    for module in ("svmstruct.train", "svmstruct.qp", "svmstruct.problem", "svmstruct.loop_state",
                   "svmstruct.line_search", "svmstruct.evaluator"):
        assert not any(m.startswith("svmstruct.losses") for m in reachable(graph, module)), module


def test_cli_names_no_loss():
    strings = {node.value for node in ast.walk(ast.parse((PACKAGE / "cli.py").read_text()))
               if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    names = {alias for loss in losses.REGISTRY.values() for alias in (loss.name, *loss.aliases)
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
    """distributed.py is a training source (ClusterSource) that api.train_grid trains on, not a pipeline."""
    assert not {m for m in all_imports(PACKAGE / "distributed.py") if m.startswith("svmstruct.api")}


def test_the_model_header_is_read_through_typed_fields_only():
    """Outside model.py no module touches Model.header: C, epsilon, normalize, scores, ... are its fields."""
    for path in PACKAGE.rglob("*.py"):
        if path.name == "model.py":
            continue
        uses = [node.lineno for node in ast.walk(ast.parse(path.read_text()))
                if isinstance(node, ast.Attribute) and node.attr == "header"]
        assert not uses, f"{path.name} reads .header at lines {uses}"
