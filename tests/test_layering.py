"""The architecture as a test (docs/architecture.md): imports point one way, down the layers, a
package's private modules (``_name``) are imported only inside it, the product never imports the research
(experiments/), and no class or function grows past what one can read at once. Read from the source with ast."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("search_spaces", "objectives", "tuner")
RESEARCH = ("experiments",)  # research imports the product (PACKAGES); the product never imports it
# Lowest first. A module may import from a lower layer, or from its own group; never from a higher
# layer or from another group of its own layer (observers and outputs do not know each other).
LAYERS: list[list[tuple[str, ...]]] = [
    [("search_spaces",)],
    [("objectives",)],
    [("tuner.model", "tuner.trials", "tuner.summary", "tuner.ranking", "tuner.stats", "tuner.fmt", "tuner.events",
      "tuner.options_file", "tuner.target", "tuner.backends")],
    [("tuner.samplers",), ("tuner.pruners",), ("tuner.rungs",), ("tuner.executors",)],
    [("tuner.engine",)],
    [("tuner.observers",), ("tuner.outputs",)],
    [("tuner", "tuner.api", "tuner.cli", "tuner.ui")],
]
DATA_MODEL = ("tuner.model", "tuner.events")
# db_bench's own modules: reached only through its backend (tuner.backends), behind the measurement
# contract (tuner/backends/base.py), never by what runs, observes or reports a study whatever measures it.
# Its workloads (db_bench phases) are its own too: what runs, observes or reports a study knows the task a backend
# runs as objectives.contract.Task (what serves every backend: NEUTRAL).
DB_BENCH = ("objectives.dbbench", "objectives.runner", "objectives.measurement", "objectives.defaults",
            "objectives.parser", "objectives.metrics", "objectives.trace", "objectives.workloads")
BACKEND_BLIND = ("tuner.engine", "tuner.executors", "tuner.observers", "tuner.outputs", "tuner.api")
# What of objectives/ serves every backend, the one part of it what runs, observes or reports a study imports: the
# contract (a Task, a Measurement, what a run raises), flags, scores, runs at a rate, the work directory and the
# benchmark.sh-style configuration.
NEUTRAL = ("objectives.contract", "objectives.flags", "objectives.scores", "objectives.rates", "objectives.workdir",
           "objectives.configurations")
# A generic record (a dataclass of tuner/ outside the backends) names what measured its ``build``, never
# db_bench (issue: one opaque backend record). The one exception: the db_bench backend's own flags, which
# the CLI and study files give in ExecutionConfig (--db-bench, --allow-mixed-db-bench).
DB_BENCH_FIELDS_ALLOWED = {("tuner.model", "ExecutionConfig", "db_bench"),
                           ("tuner.model", "ExecutionConfig", "allow_mixed_db_bench")}
# The db_bench backend's own flags as ExecutionConfig's fields (the CLI and study files give them there): the
# one identifier outside the backends and the CLI that names db_bench, declared in tuner.model, read as attributes.
DB_BENCH_NAMES_ALLOWED = {"db_bench", "allow_mixed_db_bench"}
MAX_CLASS_LINES = 200
MAX_FUNCTION_LINES = 80


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()


def _place(module: str) -> tuple[int, int]:
    """(layer, group) of a module: the longest matching prefix decides."""
    best: tuple[int, int, int] | None = None
    for layer, groups in enumerate(LAYERS):
        for group, prefixes in enumerate(groups):
            for prefix in prefixes:
                if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > best[2]):
                    best = (layer, group, len(prefix))
    assert best is not None, f"{module} is in no layer of tests/test_layering.py"
    return best[0], best[1]


def _imports(module: str, path: Path, roots: tuple[str, ...] = PACKAGES) -> list[tuple[int, str, bool]]:
    """(line, imported module of the ``roots`` packages, inside an ``if TYPE_CHECKING:`` block)."""
    tree = ast.parse(path.read_text())
    typing_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            typing_only |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    out = []
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in (n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        for name in names:
            if name.split(".")[0] in roots:
                out.append((node.lineno, name, id(node) in typing_only))
    return out


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def test_every_module_has_a_layer():
    for module in MODULES:
        _place(module)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down(module):
    layer, group = _place(module)
    wrong = []
    for line, target, typing_only in _imports(module, MODULES[module]):
        if typing_only and target.startswith(DATA_MODEL):
            continue
        their_layer, their_group = _place(target)
        if their_layer > layer or (their_layer == layer and their_group != group):
            wrong.append(f"{_shown(MODULES[module])}:{line} imports {target}")
    assert not wrong, "imports that point up or sideways:\n" + "\n".join(wrong)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_the_product_never_imports_the_research(module):
    """The product runs without experiments/ (issue 69): the research runners and their helpers import the
    tuner, never the reverse, not even lazily or for typing."""
    wrong = [f"{_shown(MODULES[module])}:{line} imports {target}"
             for line, target, _ in _imports(module, MODULES[module], RESEARCH)]
    assert not wrong, "imports of the research:\n" + "\n".join(wrong)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_private_modules_stay_in_their_package(module):
    """Optuna's convention: outside a package, its public names (its ``__init__``), never its ``_`` modules."""
    wrong = []
    for line, target, _ in _imports(module, MODULES[module]):
        parts = target.split(".")
        private = next((i for i, part in enumerate(parts) if part.startswith("_")), None)
        package = ".".join(parts[:private])
        if private is not None and not (module == package or module.startswith(package + ".")):
            wrong.append(f"{_shown(MODULES[module])}:{line} imports {target}")
    assert not wrong, "imports of another package's private modules:\n" + "\n".join(wrong)


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith(BACKEND_BLIND)))
def test_the_study_knows_db_bench_only_through_its_backend(module):
    """The engine, executors, observers, outputs and the API import none of db_bench's modules: they ask
    the backend (tuner.backends: find, check, prepare, preload, measure, teardown, describe, its
    capabilities)."""
    wrong = [f"{_shown(MODULES[module])}:{line} imports {target}" for line, target, _ in _imports(module, MODULES[module])
             if target.startswith(DB_BENCH)]
    assert not wrong, "imports of db_bench's modules, not through its backend:\n" + "\n".join(wrong)


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith(BACKEND_BLIND)))
def test_above_the_backends_only_what_serves_every_backend_is_imported_of_objectives(module):
    """The engine, executors, observers, outputs and the API import of objectives/ only its NEUTRAL modules: the
    rest is a backend's own (db_bench's, the open-loop driver's), reached through tuner.backends."""
    wrong = [f"{_shown(MODULES[module])}:{line} imports {target}" for line, target, _ in _imports(module, MODULES[module])
             if (target == "objectives" or target.startswith("objectives.")) and not target.startswith(NEUTRAL)]
    assert not wrong, "imports of a backend's own modules of objectives/:\n" + "\n".join(wrong)


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith(("tuner.observers", "tuner.outputs"))))
def test_observers_and_outputs_never_import_the_engine(module):
    """Observers receive events and snapshots, outputs take the final snapshot (docs/architecture.md):
    neither reaches into the engine that made them."""
    wrong = [f"{_shown(MODULES[module])}:{line} imports {target}" for line, target, _ in _imports(module, MODULES[module])
             if target == "tuner.engine" or target.startswith("tuner.engine.")]
    assert not wrong, "imports of the engine:\n" + "\n".join(wrong)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_classes_and_functions_stay_small(module):
    path = MODULES[module]
    too_long = []
    for node in ast.walk(ast.parse(path.read_text())):
        lines = (node.end_lineno or node.lineno) - node.lineno + 1 if hasattr(node, "lineno") else 0
        if isinstance(node, ast.ClassDef) and lines > MAX_CLASS_LINES:
            too_long.append(f"class {node.name}: {lines} lines (> {MAX_CLASS_LINES})")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and lines > MAX_FUNCTION_LINES:
            too_long.append(f"function {node.name}: {lines} lines (> {MAX_FUNCTION_LINES})")
    assert not too_long, f"{_shown(path)}: " + "; ".join(too_long)


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("tuner") and not m.startswith("tuner.backends")))
def test_generic_records_name_no_db_bench(module):
    """No dataclass field outside the backends is named after db_bench (``Found.db_bench`` is the db_bench
    and rate backends' own): what measured is a ``Build`` (tuner.summary), whatever the backend."""
    wrong = []
    for node in ast.walk(ast.parse(MODULES[module].read_text())):
        if isinstance(node, ast.ClassDef) and any("dataclass" in ast.unparse(d) for d in node.decorator_list):
            wrong += [f"{node.name}.{item.target.id}" for item in node.body if isinstance(item, ast.AnnAssign)
                      and isinstance(item.target, ast.Name) and "db_bench" in item.target.id
                      and (module, node.name, item.target.id) not in DB_BENCH_FIELDS_ALLOWED]
    assert not wrong, f"{_shown(MODULES[module])}: fields named after db_bench: " + ", ".join(wrong)


@pytest.mark.parametrize("module, source, check, message", [
    ("tuner.engine._bad", "from tuner.observers import ConsoleProgress\nfrom tuner import ranking\n",
     test_imports_point_down, "bad.py:1 imports tuner.observers\n"),
    ("tuner.bad", "from tuner.engine import Engine\nfrom tuner.engine._budget import Budget\n",
     test_private_modules_stay_in_their_package, "bad.py:2 imports tuner.engine._budget\n"),
    ("tuner.executors._bad", "from tuner.backends import RunFailed\nfrom objectives.runner import Runner\n",
     test_the_study_knows_db_bench_only_through_its_backend, "bad.py:2 imports objectives.runner\n"),
    ("tuner.bad", "from tuner import api\n\ndef f():\n    from experiments.studies import runner\n",
     test_the_product_never_imports_the_research, "bad.py:4 imports experiments.studies\n"),
    ("tuner.bad", "from dataclasses import dataclass\n\n@dataclass(frozen=True)\nclass Bad:\n    db_bench_seed: int\n",
     test_generic_records_name_no_db_bench, "bad.py: fields named after db_bench: Bad.db_bench_seed"),
], ids=["upward", "private", "db_bench", "research", "db_bench field"])
def test_the_rules_catch_a_violation(tmp_path, monkeypatch, module, source, check, message):
    """The checks themselves fail on a violation: the engine importing an observer; an app importing
    the engine's private module instead of the engine; an executor importing db_bench's runner; an app
    importing a research runner, lazily; a generic record with a field named after db_bench."""
    fake = tmp_path / "bad.py"
    fake.write_text(source)
    monkeypatch.setitem(MODULES, module, fake)
    with pytest.raises(AssertionError, match=message):
        check(module)


def _picture() -> dict[int, str]:
    """docs/architecture.md's picture of the layers: each layer's text by its number."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    block = text.split("```\n", 2)[1]
    chunks = re.split(r"^ layer (\d+) ", block, flags=re.M)
    return {int(number): body for number, body in zip(chunks[1::2], chunks[2::2], strict=True)}


def _drawn_as(module: str) -> str:
    """How the picture names a module: a package as its folder (``engine/``), a module as its file."""
    path = MODULES[module]
    if path.name == "__init__.py":
        return f"{path.parent.name}/"
    return f"tuner/{path.name}" if module.count(".") == 1 and _place(module)[0] == len(LAYERS) - 1 else path.name


def test_the_architecture_picture_draws_the_layers_this_test_enforces():
    """docs/architecture.md's picture has a line per layer of LAYERS, and names each package and module of
    tuner/, and the packages below it, in the layer this test places it in."""
    picture = _picture()
    assert sorted(picture) == list(range(len(LAYERS))), "the picture's layers are not LAYERS'"
    shown = [m for m in MODULES if m in ("search_spaces", "objectives") or m.startswith("tuner.") and m.count(".") == 1]
    missing = [f"layer {_place(m)[0]}: {_drawn_as(m)} ({m})" for m in shown if _drawn_as(m) not in picture[_place(m)[0]]]
    assert not missing, "docs/architecture.md's picture does not draw, in its layer:\n" + "\n".join(missing)


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("tuner")
                                          and not m.startswith(("tuner.backends", "tuner.cli"))))
def test_outside_its_backend_db_bench_is_named_in_words_only(module):
    """Outside the backends (and the CLI, which gives db_bench's flags), db_bench appears in strings and
    comments a user or reader sees, never in an identifier: no capability, function, variable or parameter is
    named after it, but ExecutionConfig's fields for the db_bench backend's own flags (DB_BENCH_NAMES_ALLOWED),
    declared in tuner.model and read elsewhere as attributes."""
    tokens = list(tokenize.tokenize(io.BytesIO(MODULES[module].read_bytes()).readline))
    wrong = [f"{_shown(MODULES[module])}:{t.start[0]}: {t.string}" for i, t in enumerate(tokens)
             if t.type == tokenize.NAME and re.search("db_?bench", t.string, re.I)
             and not (t.string in DB_BENCH_NAMES_ALLOWED and (module == "tuner.model" or tokens[i - 1].string == "."))]
    assert not wrong, "identifiers named after db_bench outside its backend:\n" + "\n".join(wrong)
