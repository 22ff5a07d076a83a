"""``python -m experiments.studies``: reproduce the source studies S0-S4 (their sweep, the tuner, a
head-to-head) on this machine and write their reports (docs/experiments.md). Run it from the
repository's root."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from experiments.studies import runner
from experiments.studies.runner import RESULTS, RUNS_DIR, ExperimentError, ExperimentRun
from experiments.studies.writeup import write_overview, write_report
from tuner.backends import EnvironmentFault
from tuner.cli import EXIT_USAGE, INPUT_ERRORS, at_least
from tuner.observers import ConsoleProgress

PROG = "python -m experiments.studies"


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad flag ends with one line and exit code 2, as ``rocksdb-tuner``'s do."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message} (see --help)", file=sys.stderr)
        sys.exit(EXIT_USAGE)


def build_parser() -> argparse.ArgumentParser:
    x = _Parser(prog=PROG, description="Reproduce source studies S0-S4: their sweep, the tuner, a head-to-head.")
    x.add_argument("ids", nargs="*", metavar="ID",
                   help="study ids (e.g. S2) or study files of your own, or 'all'; none: list them")
    x.add_argument("--quick", action="store_true",
                   help="tiny data, 3 sweep points, 2 seeds of 3 trials, 2 rounds, no drain: checks that it runs "
                        "(results under runs/)")
    x.add_argument("--rounds", type=at_least(3), default=5, help="interleaved rounds of the head-to-head (default 5)")
    x.add_argument("--seeds", type=at_least(1), default=3,
                   help="tuner searches, one per seed, each with the sweep's machine time (default 3)")
    x.add_argument("--library", type=Path, default=Path("runs"), metavar="DIR",
                   help="finished studies the tuner may warm-start from, never this experiment's (default runs)")
    x.add_argument("--report-only", action="store_true",
                   help="rewrite report.md, plots and overview.md from the saved result.json files")
    x.add_argument("--db-bench")
    x.add_argument("--rocksdb-version", metavar="V", help="measure with the db_bench of RocksDB V (e.g. 9.11)")
    x.add_argument("--work-dir", type=Path,
                   help="where trial DBs are created (default $TMPDIR/rocksdb-tuner-work-<uid>, /tmp without TMPDIR)")
    x.add_argument("--runs-dir", type=Path, default=RUNS_DIR,
                   help="study storage and db_bench logs (default runs/experiments)")
    x.add_argument("--results", type=Path, help="report directory (default experiments/studies/results/ID; "
                   "runs/experiments/ID-quick/results with --quick)")
    x.add_argument("--rerun", metavar="LABEL", type=_label,
                   help="a re-run kept beside the committed results (e.g. on another build: --rocksdb-version 10.4 "
                        "--rerun 10.4.2): reports in experiments/studies/results/ID/rerun-LABEL, studies in "
                        "runs/experiments/rerun-LABEL unless --runs-dir")
    x.add_argument("--mlflow-uri", help="MLflow tracking URI (default $MLFLOW_TRACKING_URI, else sqlite:///mlruns/mlflow.db)")
    x.add_argument("--no-mlflow", action="store_true", help="do not track in MLflow")
    return x


def _label(text: str) -> str:
    """A re-run's label: letters, digits, '.', '-' and '_' (it names a directory)."""
    if not text or not all(c.isalnum() or c in ".-_" for c in text) or text.startswith("."):
        raise argparse.ArgumentTypeError(f"a label of letters, digits, '.', '-' and '_', e.g. 10.4.2; got {text!r}")
    return text


def _report_dir(study: str, rerun: str | None) -> Path:
    """Where an experiment's reports go: its committed results, or a re-run's folder beside them."""
    return RESULTS / study / f"rerun-{rerun}" if rerun else RESULTS / study


def _resume(study: str, args: argparse.Namespace) -> str:
    """The command that resumes an experiment: its id and the flags that choose its build and folders."""
    flags = [("--quick", args.quick), ("--db-bench", args.db_bench), ("--rocksdb-version", args.rocksdb_version),
             ("--rerun", args.rerun),
             ("--runs-dir", args.runs_dir not in (RUNS_DIR, RUNS_DIR / f"rerun-{args.rerun}") and args.runs_dir),
             ("--results", args.results)]
    return " ".join([PROG, study, *(flag if value is True else f"{flag} {value}" for flag, value in flags if value)])


def run(args: argparse.Namespace) -> int:
    """List the studies, rewrite their reports (``--report-only``), or run them; the exit status."""
    if not args.ids:
        for name in runner.names():
            e = runner.load(name)
            print(f"{e.id:<4} {e.title} ({e.path})")
        return 0
    ids = runner.names() if args.ids == ["all"] else args.ids
    if args.results and len(ids) > 1:
        raise ExperimentError("--results: names one report directory; give one experiment id")
    if args.rerun and (args.results or args.quick):
        raise ExperimentError(f"--rerun: not with {'--results' if args.results else '--quick'} (it names "
                              "the report directory)")
    if args.rerun and args.runs_dir == RUNS_DIR:
        args.runs_dir = RUNS_DIR / f"rerun-{args.rerun}"
    if args.report_only:
        for name in ids:
            e = runner.load(name)
            dest = args.results or _report_dir(e.id, args.rerun)
            saved = dest / "result.json"
            if not saved.is_file():
                raise ExperimentError(f"--report-only: {saved} does not exist; run the experiment first")
            write_report(json.loads(saved.read_text()), dest, scale_note=e.scale_note)
            print(f"wrote {dest / 'report.md'}")
        print(f"wrote {write_overview(RESULTS)}")
        return 0
    loaded = [runner.load(name) for name in ids]  # every file is checked before anything runs
    progress = ConsoleProgress()
    for e in loaded:
        experiment = ExperimentRun(e, progress, quick=args.quick, rounds=args.rounds, seeds=args.seeds,
                                   library=args.library, db_bench=args.db_bench, rocksdb_version=args.rocksdb_version,
                                   work_dir=args.work_dir, runs_dir=args.runs_dir,
                                   results_dir=args.results or (_report_dir(e.id, args.rerun) if args.rerun else None),
                                   mlflow=not args.no_mlflow, mlflow_uri=args.mlflow_uri)
        try:
            experiment.run()
        except KeyboardInterrupt:
            print(f"\ninterrupted: finished runs are saved; `{_resume(e.id, args)}` resumes.", file=sys.stderr)
            return 130
        except EnvironmentFault as exc:
            print(f"\nstopped: {exc.fault} ({exc.reason}). Not the configuration's failure. Finished runs are saved; "
                  f"fix it, then `{_resume(e.id, args)}` resumes.", file=sys.stderr)
            return os.EX_TEMPFAIL
        assert experiment.results_dir is not None  # set by ExperimentRun
        print(f"{e.id}: wrote {experiment.results_dir / 'report.md'}")
    if not args.quick and not args.results:
        print(f"wrote {write_overview(RESULTS)}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and :func:`run` it; a bad input ends with one line and exit code 2."""
    args = build_parser().parse_args(argv)
    try:
        return run(args)
    except (*INPUT_ERRORS, ExperimentError) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
