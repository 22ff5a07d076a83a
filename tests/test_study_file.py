"""`tune --from FILE`: a study file stands for `tune` flags, read before the command line's, and
studies/default.toml is `make tune`'s study. Parsing only: no study runs, no db_bench."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tuner.cli import _resume, build_parser, study_file_words

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT / "studies" / "default.toml"
# `make tune`'s arguments, as README gives them
MAKE_TUNE = ("--rate 140000 --slo p99.9<=10ms --objective capacity --capacity-rounds 4 --background-priority low "
             "--target-data 2GiB --target-memory 1GiB --space service --search-duration 30s --duration 60s "
             "--revalidate 0 --budget 45m --seed 1 --study default-slo --out runs/default-slo")
THROUGHPUT = ROOT / "studies" / "throughput.toml"
# the throughput study's arguments (`make tune`'s before the SLO study), as README gives them
THROUGHPUT_ARGS = ("--workload steady-overwrite --target-data 2GiB --target-memory 1GiB --space default --budget 40m "
                   "--seed 1 --serve-rate auto --slo p99.9<=10ms --capacity-rounds 5 --study default-steady-overwrite "
                   "--out runs/default-steady-overwrite")


def _parse(*argv: str) -> dict[str, Any]:
    return vars(build_parser().parse_args(["tune", *argv]))


def _study(tmp_path: Path, text: str) -> str:
    path = tmp_path / "study.toml"
    path.write_text(text)
    return str(path)


def _refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as stop:
        _parse(*argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return err


@pytest.mark.parametrize("file, words", [(DEFAULT, MAKE_TUNE), (THROUGHPUT, THROUGHPUT_ARGS)])
def test_the_study_files_are_the_arguments_readme_gives_them(file, words):
    assert _parse("--from", str(file)) == {**_parse(*words.split()), "study_file": file}
    assert " ".join(study_file_words(file)) == words  # in the same order, word for word
    readme = (ROOT / "README.md").read_text().split("## What `make tune` runs")[1].split("## ")[0]
    blocks = readme.split("```")[1::2]
    commands = [shlex.split(line) for block in blocks for line in block.replace("\\\n", " ").splitlines()[1:]
                if line.strip() and not line.startswith("#")]
    assert ["rocksdb-tuner", "tune", *words.split()] in commands  # as a shell reads it: the SLO quoted


def test_make_tune_runs_the_default_study_file():
    tune_args = re.search(r"^TUNE_ARGS \?= (.*)$", (ROOT / "Makefile").read_text(), re.MULTILINE)
    assert tune_args is not None and tune_args[1].split() == ["--from", "studies/default.toml"]


def test_the_command_line_overrides_the_file_wherever_it_gives_its_flags():
    file = str(DEFAULT)
    assert _parse("--from", file, "--seed", "2")["seed"] == 2
    assert _parse("--seed", "2", "--from", file)["seed"] == 2  # before --from too
    overridden = _parse("--from", file, "--budget", "2h", "--no-mlflow")
    assert (overridden["budget"], overridden["no_mlflow"], overridden["rate"]) == (7200.0, True, 140000.0)


def test_switches_lists_and_numbers(tmp_path):
    file = _study(tmp_path, 'no-mlflow = true\nno-plots = false\nconstraint = ["p99_us<=500", "write_amp<=8"]\n'
                            'interval-target = 0.2\nparallel = 2\ncommand = "-x {options}"\n')
    args = _parse("--from", file)
    assert (args["no_mlflow"], args["no_plots"], args["interval_target"], args["parallel"]) == (True, False, 0.2, 2)
    assert [b.describe().replace(" ", "") for b in args["constraint"]] == ["p99_us<=500", "write_amp<=8"]
    assert args["program"] == "-x {options}"  # a value beginning with a dash is still the flag's value
    # a repeatable flag given on the command line replaces the file's list, as any other flag does
    again = _parse("--from", file, "--constraint", "p99_us<=100")
    assert [b.describe().replace(" ", "") for b in again["constraint"]] == ["p99_us<=100"]


def test_an_unknown_key_is_one_line_naming_the_file_and_the_key(tmp_path, capsys):
    file = _study(tmp_path, 'workload = "steady-overwrite"\nbugdet = "40m"\n')
    assert _refused(capsys, "--from", file) == \
        f"rocksdb-tuner: error: --from {file}: unknown key 'bugdet' (not a tune flag)\n"
    for key in ("bud", "help", "target_data"):  # no abbreviations, no --help, the flags' own spelling
        assert f"unknown key '{key}'" in _refused(capsys, "--from", _study(tmp_path, f'{key} = "1"\n'))


def test_a_bad_value_is_the_error_argparse_gives_for_its_flag(tmp_path, capsys):
    from_file = _refused(capsys, "--from", _study(tmp_path, 'budget = "4Om"\n'))
    assert from_file == _refused(capsys, "--budget", "4Om")
    assert "argument --budget: not a duration: '4Om'" in from_file


@pytest.mark.parametrize("text, message", [
    ('no-mlflow = "yes"\n', "'no-mlflow' is a switch: true or false"),
    ("seed = [1, 2]\n", "'seed' takes one value, not a list"),
    ("seed = true\n", "'seed' takes a string or a number"),
    ('from = "other.toml"\n', "key 'from': a study file does not read another"),
    ("seed = \n", "not valid TOML"),
])
def test_a_value_of_the_wrong_kind_is_one_line(tmp_path, capsys, text, message):
    file = _study(tmp_path, text)
    assert _refused(capsys, "--from", file).startswith(f"rocksdb-tuner: error: --from {file}: {message}")


def test_a_missing_file_is_one_line(tmp_path, capsys):
    assert _refused(capsys, "--from", str(tmp_path / "nope.toml")).endswith(": no such file or directory\n")


@pytest.mark.parametrize("file, backend", [(DEFAULT, "rate"), (THROUGHPUT, "db_bench")])
def test_the_resume_line_names_the_file_and_resumes_the_same_study(file, backend):
    args = build_parser().parse_args(["tune", "--from", str(file), "--trials", "30"])
    study = SimpleNamespace(name=args.study, out=args.out, config=SimpleNamespace(
        measurement=SimpleNamespace(backend=backend)), parts=SimpleNamespace(workload=SimpleNamespace(name="-")))
    line = _resume(args, study)
    assert line.startswith(f"rocksdb-tuner tune --from {file} --study {args.study} --out ")
    resumed = vars(build_parser().parse_args(shlex.split(line)[1:]))
    assert resumed == {**vars(args), "backend": backend if args.rate else None}  # the study, as it was started


@pytest.mark.parametrize("serving", [["--serve-rate", "auto"], ["--serve-rate", "120000", "--serve-rounds", "4",
                                                                  "--serve-duration", "90s"]])
def test_the_resume_line_serves_the_answer_as_the_command_line_asked(serving):
    """--serve-rate given on the command line, not in a study file: the resume command serves the answer as
    the study was started to (a resume without it would leave the served stage out)."""
    args = build_parser().parse_args(["tune", "--workload", "steady-overwrite", "--target-data", "2GiB",
                                      "--budget", "40m", "--study", "s", "--out", "o", *serving])
    study = SimpleNamespace(name="s", out="o", config=SimpleNamespace(measurement=SimpleNamespace(backend="db_bench")),
                            parts=SimpleNamespace(workload=SimpleNamespace(name="steady-overwrite")))
    assert build_parser().parse_args(shlex.split(_resume(args, study))[1:]) == args


def test_the_resume_line_of_a_rate_study_keeps_what_measures_and_what_chooses():
    """A study at a rate started with its build, seed, sampler, no re-validation, its background at nice 19 and
    no MLflow: the resume command starts it again with each (a resume without --revalidate 0 would add a
    re-validation; without --rocksdb-version it could measure on another build)."""
    args = build_parser().parse_args(["tune", "--backend", "rate", "--rate", "130000", "--slo", "p99.9<=10ms",
                                      "--objective", "capacity", "--capacity-rounds", "4", "--search-duration", "30s",
                                      "--duration", "60s",
                                      "--revalidate", "0", "--seed", "1", "--sampler", "tpe", "--rocksdb-version", "11.8",
                                      "--background-priority", "low", "--no-mlflow", "--budget", "50m", "--study", "s",
                                      "--out", "o"])
    study = SimpleNamespace(name="s", out="o", config=SimpleNamespace(measurement=SimpleNamespace(backend="rate")),
                            parts=SimpleNamespace(workload=SimpleNamespace(name="rate")))
    assert build_parser().parse_args(shlex.split(_resume(args, study))[1:]) == args


def test_docs_cli_shows_the_default_study_file_as_it_is():
    block = (ROOT / "docs" / "cli.md").read_text().split("```toml\n")[1].split("```")[0]
    flags = [line for line in DEFAULT.read_text().splitlines() if line and not line.startswith("#")]
    assert block.splitlines() == flags
