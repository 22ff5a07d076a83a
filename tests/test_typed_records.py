"""The data that travels is typed (docs/architecture.md): a trial's user attributes are read as
``TrialRecord.of(trial)`` attributes and summary.json as ``Summary`` attributes, never by their strings,
outside the modules that own them. Read from the source with ast; the allow-lists are short on purpose."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CODE = ("tuner", "objectives", "search_spaces", "experiments", "examples")
# Who may touch Optuna's user attributes: tuner/trials.py (a trial's record); the study's storage, which keeps
# the study's own attributes (its identity, baselines, preloaded DB, ...); warm starts, which compare another
# study's identity with this one's.
ATTRIBUTE_OWNERS = ("tuner/trials.py", "tuner/engine/_storage.py", "tuner/engine/_warmstart.py")
# Tests that touch user attributes on purpose: what is stored, as this or an earlier version wrote it; a study's
# identity and space, which the storage owns.
ATTRIBUTE_TESTS = (
    "tests/test_trials.py",  # the stored format of each record
    "tests/test_backends.py::test_a_study_an_earlier_version_stored_resumes_and_reports_what_it_stored",
    "tests/test_cli.py::test_resume_refuses_another_db_bench_build",  # rewrites the study's db_bench
    "tests/test_measurement.py::test_parallel_trials_are_tuned_for_their_slot",  # the study's space
    "tests/test_noise.py::test_repeats_keep_whole_runs_and_the_revalidation_holds_up",  # the rounds' saved order
)
# Who may read or write the study's own attributes by their names (store.attr("starts"), set_attr(...)): the
# storage (the identity a resume must match, baselines, the records stored/kept whole) and tuner/engine/_attrs.py
# (one typed accessor each: the starts, the re-validation's saved plan and rounds, ...).
STUDY_ATTRIBUTE_OWNERS = ("tuner/engine/_storage.py", "tuner/engine/_attrs.py")
# Who may read summary.json's keys: tuner/summary.py; and tests that check what is on disk on purpose.
SUMMARY_OWNERS = (
    "tuner/summary.py",
    "tests/test_summary.py",  # every committed record reads back key for key
    "tests/test_backends.py::test_a_command_study_needs_no_db_bench",  # the file carries its schema
)


def _files(*roots: str) -> list[Path]:
    return sorted(p for root in roots for p in (ROOT / root).rglob("*.py"))


Hit = tuple[str, int, str]  # where (path, or path::function), line, the code


def _hits(path: Path, tree: ast.AST, nodes: list[ast.AST]) -> list[Hit]:
    """Each node with where it is: ``path::function`` of the innermost function it is in, else ``path``."""
    functions = [f for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
    shown = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name
    out = []
    for node in nodes:
        line = getattr(node, "lineno", 0)
        inside = [f for f in functions if f.lineno <= line <= (f.end_lineno or f.lineno)]
        out.append((f"{shown}::{inside[-1].name}" if inside else shown, line, ast.unparse(node)))
    return out


def _owned(where: str, owners: tuple[str, ...]) -> bool:
    return any(where == owner or where.startswith(owner + "::") for owner in owners)


def attribute_reads(path: Path, source: str) -> list[Hit]:
    """Reads and writes of Optuna user attributes (``t.user_attrs[...]``, ``.get(...)``, ``set_user_attr``)."""
    tree = ast.parse(source)
    return _hits(path, tree, [node for node in ast.walk(tree)
                              if isinstance(node, ast.Attribute) and node.attr in ("user_attrs", "set_user_attr")])


def study_attribute_reads(path: Path, source: str) -> list[Hit]:
    """The study's own attributes read or written by their names: ``x.attr("key")``, ``x.set_attr(f"...", v)``."""
    tree = ast.parse(source)
    return _hits(path, tree, [node for node in ast.walk(tree) if isinstance(node, ast.Call)
                              and isinstance(node.func, ast.Attribute) and node.func.attr in ("attr", "set_attr")
                              and node.args and isinstance(node.args[0], (ast.Constant, ast.JoinedStr))])


def _names_a_summary(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and "summary" in node.id.lower()


def _is_json_load(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("load", "loads")
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "json")


def summary_reads(path: Path, source: str) -> list[Hit]:
    """summary.json parsed without :class:`tuner.summary.Summary` (a ``json.load`` of a summary file, or
    into a name that says summary, not handed to ``from_dict``), and a summary's keys read by string
    (``summary["best"]``, ``summary.get("best")``)."""
    tree = ast.parse(source)
    typed = {id(arg) for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
             and node.func.attr == "from_dict" for arg in node.args}
    into = {id(n) for node in ast.walk(tree) if isinstance(node, ast.Assign) and any(map(_names_a_summary, node.targets))
            for n in ast.walk(node.value)}
    found: list[ast.AST] = []
    for node in ast.walk(tree):
        if _is_json_load(node) and id(node) not in typed and ("summary" in ast.unparse(node).lower() or id(node) in into):
            found.append(node)
        elif (isinstance(node, ast.Subscript) and _names_a_summary(node.value)
              and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)):
            found.append(node)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
              and _names_a_summary(node.func.value) and node.args and isinstance(node.args[0], ast.Constant)):
            found.append(node)
    return _hits(path, tree, found)


def _violations(check, files: list[Path], owners: tuple[str, ...]) -> list[str]:
    found = [hit for path in files for hit in check(path, path.read_text())]
    return [f"{where}:{line} {code}" for where, line, code in found if not _owned(where, owners)]


def test_no_trial_attribute_is_read_by_its_string_outside_its_record():
    wrong = _violations(attribute_reads, _files(*CODE, "tests"), ATTRIBUTE_OWNERS + ATTRIBUTE_TESTS)
    assert not wrong, "user attributes touched outside tuner/trials.py (use TrialRecord.of, record()):\n" + \
        "\n".join(wrong)


def test_no_study_attribute_is_read_by_its_name_outside_its_accessor():
    wrong = _violations(study_attribute_reads, _files(*CODE), STUDY_ATTRIBUTE_OWNERS)
    assert not wrong, "study attributes read by their names (use tuner/engine/_attrs.py's accessors, " \
        "StudyStore.stored/keep):\n" + "\n".join(wrong)


def test_no_summary_key_is_read_by_its_string_outside_its_record():
    wrong = _violations(summary_reads, _files(*CODE, "tests"), SUMMARY_OWNERS)
    assert not wrong, "summary.json read by its keys (use Summary.load, its attributes):\n" + "\n".join(wrong)


@pytest.mark.parametrize("source, check, found", [
    ("def f(t):\n    return t.user_attrs['outcome']\n", attribute_reads, [("bad.py::f", 2, "t.user_attrs")]),
    ("t.set_user_attr('outcome', 'rejected')\n", attribute_reads, [("bad.py", 1, "t.set_user_attr")]),
    ("def f(store):\n    store.set_attr('seeded', store.attr(f'x:{1}') or [])\n    store.stored('preload', P)\n",
     study_attribute_reads, [("bad.py::f", 2, "store.set_attr('seeded', store.attr(f'x:{1}') or [])"),
                             ("bad.py::f", 2, "store.attr(f'x:{1}')")]),
    ("summary = json.loads(r.stdout)\n", summary_reads, [("bad.py", 1, "json.loads(r.stdout)")]),
    ("best = json.load(open('o/summary.json'))['best']\n", summary_reads,
     [("bad.py", 1, "json.load(open('o/summary.json'))")]),
    ("def f(summary):\n    return summary['best'], summary.get('answer')\n", summary_reads,
     [("bad.py::f", 2, "summary['best']"), ("bad.py::f", 2, "summary.get('answer')")]),
    ("summary = Summary.from_dict(json.loads(r.stdout))\nsummary.best\nsummaries = {}\nsummaries['a']\n",
     summary_reads, []),
], ids=["trial attribute", "trial attribute written", "study attribute", "printed summary", "summary file",
        "summary keys", "typed"])
def test_the_rules_catch_a_violation(tmp_path, source, check, found):
    """The checks find what they forbid, and pass what goes through the typed records."""
    assert sorted(check(tmp_path / "bad.py", source)) == sorted(found)
