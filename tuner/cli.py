"""The ``rocksdb-tuner`` command: tune, measure, doctor, workloads, spaces."""

from __future__ import annotations

import argparse
import copy
import os
import re
import shlex
import shutil
import sys
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

from objectives import workdir
from objectives.dbbench import DbBenchError, installed, probe, probe_path
from objectives.defaults import LIBRARY, DefaultsError, defaults_of
from objectives.defaults import MODES as DEFAULTS_MODES
from objectives.flags import FlagError
from objectives.memory import MemoryLimitError
from objectives.open_loop import KEY_SIZE, VALUE_SIZE, DriverFailed, OpenLoopError
from objectives.rates import ARRIVALS, BACKGROUND, Rate, parse_latency
from objectives.scores import OBJECTIVES, Bound, Score
from objectives.workloads import load_workload
from objectives.workloads import preset_names as workload_presets
from search_spaces import Context, GiB, SpaceError, load_space
from search_spaces import preset_names as space_presets
from tuner.api import Study
from tuner.backends import BACKENDS, EnvironmentFault
from tuner.engine import STOPS, stop_exit, stop_signals
from tuner.executors import EXECUTORS
from tuner.measure import measure_command
from tuner.model import (
    ExecutionConfig,
    MeasurementConfig,
    RevalidationConfig,
    SearchConfig,
    TargetConfig,
    TrackingConfig,
    TuneConfig,
    UsageError,
)
from tuner.observers import ConsoleProgress, TrackingError
from tuner.outputs import FORMATS, ExportError, closing_table, load_best, render, verify
from tuner.pruners import PRUNERS
from tuner.ranking import served_margin_words
from tuner.samplers import SAMPLERS, SamplerError

EXIT_USAGE = 2
INPUT_ERRORS = (UsageError, SpaceError, FlagError, DbBenchError, SamplerError, ExportError, TrackingError)
_SIZE_RE = re.compile(r"^\s*([\d.]+)\s*([KMGT]?)(i?B?)?\s*$", re.IGNORECASE)


TUNE_USAGE = ("%(prog)s [--from FILE] [--workload NAME|FILE] [--budget TIME]\n"
              "                          [--target-data SIZE] [--target-memory SIZE] [FLAG ...]")
TUNE_DESCRIPTION = "Run (or resume) a tuning study. Every flag is optional; all are in docs/cli.md."


class StudyFileError(ValueError):
    """A study file (`tune --from FILE`) that does not stand for `tune` flags: one line naming the file and the key."""


class _Parser(argparse.ArgumentParser):
    """argparse, but bad flags end with one line and exit code 2 (not the whole usage text); a parser with
    `--from FILE` (`tune`) reads the study file's flags before the command line's."""

    def error(self, message: str) -> NoReturn:
        print(f"{self.prog}: error: {message} (see --help)", file=sys.stderr)
        sys.exit(EXIT_USAGE)

    def parse_known_args(  # type: ignore[override]
            self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None,
    ) -> tuple[argparse.Namespace, list[str]]:
        """With `--from FILE`: parse the file's flags (:func:`study_file_words`) followed by the command line's,
        so argparse checks every value and the command line's win (a repeatable flag given there replaces
        the file's list rather than adding to it)."""
        study = self._option_string_actions.get("--from")
        argv = list(sys.argv[1:] if args is None else args)
        if study is None:
            return super().parse_known_args(argv, namespace)
        given, extras = super().parse_known_args(argv, copy.copy(namespace))  # the command line alone
        if getattr(given, study.dest) is None:
            return (given, extras) if namespace is None else super().parse_known_args(argv, namespace)
        try:
            words = study_file_words(getattr(given, study.dest), self)
        except StudyFileError as exc:
            print(f"rocksdb-tuner: error: {exc}", file=sys.stderr)
            sys.exit(EXIT_USAGE)
        parsed, extras = super().parse_known_args([*words, *argv], namespace)
        for action in self._actions:
            if isinstance(action, argparse._AppendAction) and getattr(given, action.dest) != action.default:
                setattr(parsed, action.dest, getattr(given, action.dest))
        return parsed, extras


def study_file_words(path: Path, parser: argparse.ArgumentParser | None = None) -> list[str]:
    """The `tune` flags a study file stands for, in its keys' order: ``budget = "40m"`` is ``--budget 40m``,
    ``no-mlflow = true`` is ``--no-mlflow`` (false: nothing), a list is the flag once per item (only a
    repeatable flag, ``constraint``, takes one). Keys are the flags' long names without the dashes, spelled
    out. Raises :class:`StudyFileError` for an unreadable file, an unknown key or a value of the wrong kind;
    the values themselves are argparse's to check."""
    tune = parser or next(a for a in build_parser()._actions
                          if isinstance(a, argparse._SubParsersAction)).choices["tune"]
    where = f"--from {path}"
    try:
        table = tomllib.loads(Path(path).read_text())
    except OSError as exc:
        raise StudyFileError(f"{where}: {(exc.strerror or str(exc)).lower()}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise StudyFileError(f"{where}: not valid TOML ({exc})") from None
    words: list[str] = []
    for key, value in table.items():
        action = tune._option_string_actions.get(f"--{key}")
        if action is None or isinstance(action, argparse._HelpAction) or key.startswith("-"):
            raise StudyFileError(f"{where}: unknown key {key!r} (not a tune flag)")
        if action.dest == "study_file":
            raise StudyFileError(f"{where}: key 'from': a study file does not read another")
        words += _flag_words(f"--{key}", action, value, where)
    return words


def _flag_words(flag: str, action: argparse.Action, value: object, where: str) -> list[str]:
    """A study file's ``value`` of ``flag`` as command-line words (``--flag=-x`` for a value that begins
    with a dash, which argparse would take for a flag)."""
    key = flag.removeprefix("--")
    if action.nargs == 0:
        if not isinstance(value, bool):
            raise StudyFileError(f"{where}: {key!r} is a switch: true or false")
        return [flag] if value else []
    if isinstance(value, list) and not isinstance(action, argparse._AppendAction):
        raise StudyFileError(f"{where}: {key!r} takes one value, not a list")
    words: list[str] = []
    for item in value if isinstance(value, list) else [value]:
        if isinstance(item, bool) or not isinstance(item, (str, int, float)):
            raise StudyFileError(f"{where}: {key!r} takes a string or a number")
        words += [f"{flag}={item}"] if str(item).startswith("-") else [flag, str(item)]
    return words


def parse_size(text: str) -> int:
    """Bytes from '6GiB', '512M', '1073741824' (K/M/G/T are powers of 1024)."""
    match = _SIZE_RE.match(text)
    if not match:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 6GiB, 512M, 1073741824)")
    return int(float(match[1]) * 1024 ** " KMGT".index(match[2].upper() or " "))


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
    return value


_DURATION_RE = re.compile(r"^(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m)?(?:(\d+(?:\.\d+)?)s?)?$")


def _duration(text: str) -> float:
    """Seconds from '45m', '2h', '1h30m', '90s' or '2700'."""
    match = _DURATION_RE.match(text.strip())
    if not text.strip() or not match or not any(match.groups()):
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (e.g. 45m, 2h, 1h30m, 600s)")
    h, m, sec = (float(g) if g else 0.0 for g in match.groups())
    if not 3600 * h + 60 * m + sec > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text!r}")
    return 3600 * h + 60 * m + sec


def _windows(text: str) -> tuple[int, ...]:
    """Window lengths in whole seconds from '60s', '30,60,5m'."""
    lengths = tuple(_duration(one) for one in text.split(","))
    if any(length != int(length) for length in lengths):
        raise argparse.ArgumentTypeError(f"whole seconds only, got {text!r}")
    return tuple(int(length) for length in lengths)


def parse_latency_arg(text: str) -> float:
    """Microseconds from '1ms', '500us', '0.5s', '2000' (objectives.rates.parse_latency)."""
    try:
        return parse_latency(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _fractions(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of fractions: {text!r} (e.g. 0.125,0.5,1)") from None


def _trials(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}")
    return int(text)


def _serve_rate(text: str) -> float | str:
    """--serve-rate: writes per second, or ``auto``."""
    return "auto" if text == "auto" else _positive_float(text)


def at_least(least: int) -> Callable[[str], int]:
    """An argparse type: a whole number >= ``least``."""
    def parse(text: str) -> int:
        if not text.isdigit() or int(text) < least:
            raise argparse.ArgumentTypeError(f"must be a whole number >= {least}, got {text!r}")
        return int(text)

    return parse


_WEIGHT_NAMES = {"ops": "ops_per_sec", "ops_per_sec": "ops_per_sec", "p99": "p99_us", "p99_us": "p99_us",
                 "write_amp": "write_amp", "wa": "write_amp"}


def _weights(text: str) -> dict[str, float]:
    """``ops=2,p99=1,write_amp=0`` -> {"ops_per_sec": 2.0, "p99_us": 1.0, "write_amp": 0.0}."""
    out = {}
    for part in filter(None, text.split(",")):
        name, _, value = part.partition("=")
        if name.strip() not in _WEIGHT_NAMES:
            raise argparse.ArgumentTypeError(f"unknown objective {name.strip()!r} (ops, p99, write_amp)")
        try:
            out[_WEIGHT_NAMES[name.strip()]] = float(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {value!r} in {part!r}") from None
    return out


def _objective(text: str) -> str:
    """throughput, multi, capacity, or a metric with its direction spelled out: ``p99_us`` -> ``p99_us:min``;
    ``ops_per_sec`` (maximized) is throughput, ``held_ops_per_sec`` capacity."""
    try:
        score = Score(text.strip())
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--objective: ")) from None
    named = next((name for name in OBJECTIVES if Score(name).terms == score.terms), None)
    if named is not None:  # ops_per_sec is throughput, held_ops_per_sec capacity
        return named
    return f"{score.metric}:{'max' if score.maximize else 'min'}"


def _bound(text: str) -> Bound:
    try:
        return Bound.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--constraint: ")) from None


def _port(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port number 1-65535, got {text!r}")
    return int(text)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="rocksdb-tuner", description="Bayesian tuning of RocksDB options on real db_bench runs.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    _tune_parser(sub.add_parser("tune", help="run (or resume) a tuning study", usage=TUNE_USAGE,
                                description=TUNE_DESCRIPTION))
    _other_parsers(sub)
    _measure_parser(sub.add_parser(
        "measure", help="one configuration at a fixed offered rate, open loop: latency from each request's due "
                        "time, the rate delivered, write stalls"))
    return parser


def _rate_arguments(g: argparse._ArgumentGroup) -> None:
    """`tune`'s flags of the rate backend beside --rate (docs/measure.md)."""
    g.add_argument("--read-rate", type=_positive_float, metavar="OPS",
                   help="with --rate: random reads offered per second beside the writes")
    g.add_argument("--arrivals", choices=ARRIVALS, default="constant",
                   help="with --rate: constant gaps between requests, or poisson (default constant)")
    g.add_argument("--background-priority", choices=BACKGROUND, default="normal",
                   help="with --rate: RocksDB's flush and compaction threads at the writers' CPU priority, or at the "
                        "lowest (nice 19), as your service runs them (default normal)")
    g.add_argument("--slo", metavar="BOUND",
                   help="at the end, the capacity of the best configuration and of rocksdb-default at BOUND (e.g. "
                        "'p99.9<=10ms'): the highest offered rate each holds it at, from --rate up or down, each rate "
                        "one --duration run and its settle; a db_bench study's open loop as --serve-rate runs, from "
                        "--serve-rate's rate (auto when not given), each rate one --serve-duration run; the curve in "
                        "OUT/plots and MLflow")
    g.add_argument("--capacity-rounds", type=int, default=1, metavar="R",
                   help="with --slo: the capacity searches in R paired rounds (2 or more: the ratio of the two "
                        "capacities with its 95%% interval; one: a bracket of single runs) (default 1)")


def _start_here(t: argparse.ArgumentParser) -> None:
    """`tune`'s first `--help` group: the dozen flags a study sets first, in a line or two each (docs/cli.md
    has the rest of what each does). Each sets one part of :class:`TuneConfig`, as the groups after it
    hold every other flag, one group per part."""
    g = t.add_argument_group('start here', "the flags a study sets first; every other is in the groups below")
    g.add_argument("--from", dest="study_file", type=Path, metavar="FILE",
                   help="a study file: TOML of these flags, e.g. budget = \"40m\", no-mlflow = true; flags on the "
                        "command line override the file's (studies/default.toml is `make tune`'s)")
    g.add_argument("--workload", metavar="NAME|FILE",
                   help="preset name (`rocksdb-tuner workloads`), TOML/YAML file, or trace:FILE with --db-snapshot "
                        "(default fillrandom; with --target-data, steady-overwrite)")
    g.add_argument("--rate", type=_positive_float, metavar="OPS",
                   help="writes offered per second, open loop (--backend rate), on a DB of --target-data (2 GiB when "
                        "not given): the score is then p99.9_us at that rate, unless --objective names another "
                        "metric or capacity (docs/measure.md)")
    g.add_argument("--target-data", type=parse_size, metavar="SIZE",
                   help="raw data of the DB you deploy, e.g. 4GiB: trials run in its LSM shape, the answer is "
                        "confirmed at it (default: none, the workload's own size)")
    g.add_argument("--target-memory", type=parse_size, metavar="SIZE",
                   help="memory RocksDB may use there, page cache included, e.g. 1GiB: trials run in a memory "
                        "cgroup of it (default: the workload's data_to_memory, if it sets one)")
    g.add_argument("--budget", type=_duration, metavar="TIME",
                   help="machine time for the whole study, re-validation included, e.g. 45m or 2h: the search "
                        "stops when the next trial and the re-validation would not fit")
    g.add_argument("--trials", type=_trials, default=None, metavar="N",
                   help="measured trials in the study, resumed ones included (default 20, or as many as --budget allows)")
    g.add_argument("--seed", type=int, metavar="N",
                   help="sampler seed (also db_bench's --seed); makes a study reproducible")
    g.add_argument("--space", metavar="NAME|FILE",
                   help="preset name (`rocksdb-tuner spaces`) or TOML/YAML file (default default; with --rate, service)")
    g.add_argument("--objective", type=_objective, metavar="OBJECTIVE",
                   help="throughput (max ops/s), multi (Pareto: ops/s, P99, write amp), capacity (with --rate and "
                        "--slo: each trial a search for the highest rate it holds --slo at, from --rate), or any "
                        "metric the runs report, METRIC:max or METRIC:min, e.g. p99_us:min; METRIC alone: max, min "
                        "for a latency, time or size (default throughput; with --rate, p99.9_us)")
    g.add_argument("--study", metavar="NAME",
                   help="study name; an existing one is resumed (default <workload>-<time>)")
    g.add_argument("--out", type=Path, metavar="DIR", help="output directory (default runs/<study>)")


def _tune_parser(t: argparse.ArgumentParser) -> None:
    """`tune`'s options: first the ones a study sets first, then the rest in one group per part of
    :class:`TuneConfig`, as `tune --help` shows them."""
    _start_here(t)
    g = t.add_argument_group('measurement', 'what each configuration runs, at what size, and how it is measured')
    g.add_argument("--backend", choices=list(BACKENDS),
                   help="what measures a configuration: db_bench runs --workload; command runs --command, your own "
                        "program; rate runs RocksDB at --rate, open loop (default db_bench, or rate with --rate)")
    _rate_arguments(g)
    g.add_argument("--duration", type=_duration, metavar="TIME",
                   help="length of each timed phase of a preloaded workload where the answer is confirmed (the "
                        "re-validation), e.g. 30s; with --backend command, each run's {duration} (default the "
                        "workload's; a program's: none; with --rate, 60s)")
    g.add_argument("--search-duration", type=_duration, metavar="TIME",
                   help="length of the search's trials' timed phases, at most --duration: shorter runs let more "
                        "configurations be tried, and the re-validation confirms the answer at --duration (default "
                        "the workload's search_duration, 10 s for steady-overwrite, else --duration)")
    g.add_argument("--scale", type=_positive_float,
                   help="workload size factor (default 1); with --target-data, the trials' share of the target's "
                        "data (0 < F <= 1), the answer confirmed at the target")
    g.add_argument("--db-snapshot", type=Path, metavar="DIR",
                   help="the DB runs start from, never written (each run works on a hard-linked copy): with "
                        "--workload trace:TRACE the DB the trace was recorded on; with a preloaded workload your own "
                        "DB instead of one the study builds (its size the target's data unless --target-data, its "
                        "OPTIONS file the --base-options unless given)")
    g.add_argument("--no-drain", action="store_true",
                   help="score burst ops/s: do not flush and wait for compaction after each phase, so deferred work "
                        "is free (faster trials; the default charges it: docs/metrics.md)")
    g.add_argument("--defaults", choices=DEFAULTS_MODES, default=LIBRARY,
                   help="what every run starts from, rocksdb-default included: library, what an application that "
                        "opens a DB with default options gets from the RocksDB version that measures (dynamic level "
                        "sizes from 8.4, its block cache, format and readahead); db_bench-7.8.3, RocksDB 7.8.3's "
                        "db_bench defaults pinned on every version, for comparing versions (default library)")
    g.add_argument("--no-baselines", action="store_true", help="skip hand-found baselines (defaults still run)")
    g.add_argument("--repeats", type=at_least(1), default=1,
                   help="measure each trial (and baseline) R times, one after the other; its score is the median")
    g.add_argument("--trial-timeout", type=_positive_float, default=600.0, help="seconds before a trial is killed")
    g = t.add_argument_group('the target', 'the DB the answer is for: trials keep its shape, the answer is confirmed there')
    g.add_argument("--base-options", type=Path, metavar="OPTIONS",
                   help="your current RocksDB OPTIONS file: every option the space does not search (file and level "
                        "sizes, L0 triggers, ...) stays as it is there, and it is the baseline gains are measured "
                        "against (default: RocksDB's defaults)")
    g.add_argument("--memory-limit", type=parse_size, metavar="SIZE",
                   help="run scored phases (your program's runs, with --backend command) in a memory cgroup of SIZE: "
                        "process and page cache, like a server whose "
                        "data exceeds its memory (default: the workload's data / data_to_memory, if it sets one)")
    g.add_argument("--memory-budget", type=parse_size,
                   help="memtables + block cache limit (default 3/4 of --memory-limit, else RAM / 4)")
    _search_args(t)


def _search_args(t: argparse.ArgumentParser) -> None:
    """`tune`'s options on the search: its space, its score, how configurations are chosen."""
    g = t.add_argument_group('search', 'the space searched, the score, how configurations are chosen and how many')
    g.add_argument("--prefer", type=_weights, metavar="WEIGHTS",
                   help="with --objective multi, how the one recommended configuration is picked from the Pareto "
                        "front: weights of ops, p99, write_amp, e.g. ops=2,p99=1,write_amp=0 (default 1 each: the "
                        "front member nearest the ideal point)")
    g.add_argument("--max-p99-us", type=_positive_float, help="budget: P99 latency of scored phases, microseconds")
    g.add_argument("--max-write-amp", type=_positive_float, help="budget: write amplification")
    g.add_argument("--constraint", type=_bound, action="append", metavar="METRIC<=VALUE",
                   help="budget on any metric the runs report, METRIC<=VALUE or METRIC>=VALUE, e.g. p99_us<=500 "
                        "or ops_per_sec>=20000; repeat it for several (trials that break one rank after those "
                        "that keep them all, as with --max-p99-us)")
    g.add_argument("--sampler", default="auto",
                   help=f"one of {', '.join(SAMPLERS)} (default auto: skopt for a single-objective study without "
                        "budgets (--max-*, --constraint), serial or parallel, else tpe)")
    g.add_argument("--fidelity", type=_fractions, metavar="F,F,1",
                   help="multi-fidelity: each configuration runs at these fractions of the data size in turn "
                        "(e.g. 0.125,0.5,1); successive halving keeps the best third of each rung for the next; "
                        "the first 6 climb every rung, and a rung that ranks them unlike the full size (Kendall tau "
                        "< 0.6) is skipped from then on; every reported figure is at full size")
    g.add_argument("--pruner", default="none", choices=PRUNERS,
                   help="stop hopeless trials early from their per-second throughput (default none)")
    g.add_argument("--pruner-warmup", type=at_least(0), default=4, metavar="SECONDS",
                   help="seconds of a scored phase before a trial may be pruned (default 4)")
    g.add_argument("--warm-start", metavar="SOURCE",
                   help="a new study learns from an earlier one's trials: its --out dir, summary.json, or name "
                        "in --storage (same workload, space, objective, scale and db_bench build); or auto: the "
                        "most similar finished study of --library")
    g.add_argument("--library", type=Path, default=Path("runs"), metavar="DIR",
                   help="where --warm-start auto looks for finished studies (default runs)")
    g.add_argument("--no-starts", action="store_true",
                   help="do not measure the defaults, your configuration (--baseline, --base-options) and the "
                        "benchmark.sh-style configuration as the first trials")
    g.add_argument("--any-cost", action="store_true",
                   help="let the re-validation choose among trials that cost more than rocksdb-default (disk, write amp, "
                        "write stalls) beyond the cost guard's margins, and answer a winner that costs more at the "
                        "target or serves a worse tail at --serve-rate")
    _revalidation_args(t)


def _backend_args(t: argparse.ArgumentParser) -> None:
    """`tune`'s options of one backend only: db_bench's build and defaults, the command backend's program."""
    g = t.add_argument_group('the db_bench backend', 'which db_bench build measures, on each node (--backend db_bench, '
                             'the default)')
    g.add_argument("--rocksdb-version", metavar="V",
                   help="measure with the db_bench of RocksDB V (e.g. 9.11 or 7.8; `rocksdb-tuner doctor` lists them)")
    g.add_argument("--allow-mixed-db-bench", action="store_true",
                   help="accept nodes whose db_bench version or build differs from this host's")
    g.add_argument("--db-bench", help="db_bench binary (default $ROCKSDB_TUNER_DB_BENCH, else the newest release "
                   "build of 'make db_bench', else db_bench on PATH)")
    g = t.add_argument_group('your program', '--backend command: the program run on each configuration, and what builds '
                             'its DB')
    g.add_argument("--command", metavar="TEMPLATE", dest="program",  # args.command names the subcommand
                   help="--backend command: the program run on each configuration, split as a shell would split it; "
                        "{options} becomes its OPTIONS file, {db} a fresh DB directory (a checkpoint of the DB --load "
                        "built), {seed} the seed, {data_bytes} --target-data in bytes, {duration} the run's seconds "
                        "(--search-duration in the search, --duration in the re-validation). It prints its metrics as "
                        "a JSON line on stdout: ops_per_sec, and p99_us or any other number (--objective and "
                        "--constraint may name them)")
    g.add_argument("--load", metavar="TEMPLATE",
                   help="--backend command: the program that builds its DB once per study, before the first run, "
                        "as --command is given ({db}: the DB directory to fill, {options}: RocksDB's default OPTIONS "
                        "file, {seed}, {data_bytes}), outside any memory limit, its time counted toward --budget; "
                        "every run's {db} is then a hard-linked checkpoint of it, never the DB itself "
                        "(default none: every run starts on an empty DB)")


def _revalidation_args(t: argparse.ArgumentParser) -> None:
    """`tune`'s options on the re-validation, where trials run and what is kept."""
    g = t.add_argument_group('re-validation', 'how the answer and its gain are confirmed after the search')
    g.add_argument("--revalidate", type=at_least(0), metavar="K",
                   help="after the search, choose the best of K finalists from distinct regions of the space on "
                        "rounds of their own, then measure it against the baselines in paired rounds for its gain and "
                        "interval (default 3; 0: report single runs, not re-validated)")
    g.add_argument("--revalidate-rounds", type=at_least(2), metavar="N",
                   help="paired rounds of the gain's estimate, at least (default 5; alone, it raises the at most "
                        "to N)")
    g.add_argument("--revalidate-max-rounds", type=at_least(2), metavar="M",
                   help="... and at most, while the interval is wider than --interval-target (default 10)")
    g.add_argument("--revalidation-time", type=_duration, metavar="TIME",
                   help="without --budget: machine time the re-validation may take, e.g. 20m; finalists, rounds and "
                        "the ablation shrink to fit it (default: about the search's own, unless --revalidate, "
                        "--revalidate-rounds or --revalidate-max-rounds is given: then their sizes as asked)")
    g.add_argument("--interval-target", type=_positive_float, default=0.10, metavar="W",
                   help="stop adding rounds when the gain's 95 %% interval has high / low - 1 <= W (default 0.10)")
    g.add_argument("--no-ablation", action="store_true",
                   help="do not re-measure the best with each option put back to the reference's value (the "
                        "measured 'why' and the minimal configuration)")
    g.add_argument("--baseline", type=Path, metavar="FILE",
                   help="your current configuration, an OPTIONS file or db_bench flags: measured beside the "
                        "defaults, and what the reported gain is against")
    g.add_argument("--confirm-scale", type=_positive_float, metavar="F",
                   help="re-validate at --scale F (the size you run), and report how the finalists' order changed")
    g.add_argument("--serve-rate", type=_serve_rate, metavar="OPS|auto",
                   help="after the re-validation, run the answer and rocksdb-default open loop at OPS writes/s on a "
                        "DB of the target's data (auto: 0.4 x the defaults' sustained ops/s): the tail, stalls and "
                        "share delivered a service at that rate would see of each (a release db_bench's open_loop)")
    g.add_argument("--serve-rounds", type=at_least(1), default=3, metavar="R",
                   help=f"with --serve-rate: paired rounds; an answer served with {served_margin_words()}, is not "
                        "the answer (default 3)")
    g.add_argument("--serve-duration", type=_duration, default=60.0, metavar="TIME",
                   help="with --serve-rate, and --slo on a db_bench study: each run's length, then its settle "
                        "(default 60s)")
    _backend_args(t)
    g = t.add_argument_group('execution', 'where trials run: this process or Ray workers, in which directory')
    g.add_argument("--parallel", type=at_least(1), default=1, metavar="N",
                   help="run up to N trials at once on Ray (default 1: one at a time, in this process)")
    g.add_argument("--executor", choices=sorted(EXECUTORS), metavar="NAME",
                   help=f"where trials run: {', '.join(sorted(EXECUTORS))} (default ray with --parallel > 1 or "
                        "--ray-address, else local: one at a time in this process)")
    g.add_argument("--ray-address", metavar="ADDR",
                   help="run trials on an existing Ray cluster (auto, HOST:PORT or ray://HOST:PORT); default a "
                        "local Ray instance when --parallel > 1")
    g.add_argument("--cpus-per-trial", type=at_least(1), metavar="C",
                   help="cores reserved and pinned for each parallel trial (default the cluster's CPUs / N)")
    g.add_argument("--one-trial-per-node", action="store_true",
                   help="never run two trials on one node (measurement-grade: no shared disk or caches)")
    g.add_argument("--work-dir", type=Path,
                   help="where trial DBs are created (default $TMPDIR/rocksdb-tuner-work-<uid>, /tmp without TMPDIR)")
    g = t.add_argument_group('tracking and outputs', 'where the study is kept and what it writes')
    g.add_argument("--storage", help="Optuna storage URL (default sqlite:///OUT/study.db)")
    g.add_argument("--json", action="store_true", help="print summary.json to stdout instead of the table")
    g.add_argument("--mlflow-uri", help="MLflow tracking URI (default $MLFLOW_TRACKING_URI, else "
                   "sqlite:///mlruns/mlflow.db in the current directory)")
    g.add_argument("--experiment", help="MLflow experiment name (default the workload's name)")
    g.add_argument("--no-mlflow", action="store_true", help="do not track the study in MLflow")
    g.add_argument("--no-plots", action="store_true", help="do not draw OUT/plots/ (PNG + HTML)")


def _other_parsers(sub: argparse._SubParsersAction) -> None:
    d = sub.add_parser("doctor", help="show this host and every db_bench build, and which one a study uses")
    d.add_argument("--db-bench")
    d.add_argument("--rocksdb-version", metavar="V")
    d.add_argument("--work-dir", type=Path, help="where trial DBs would be created")

    e = sub.add_parser("export", help="write a study's answer as OPTIONS file, flags or Python")
    e.add_argument("--summary", type=Path, required=True, help="the study's summary.json (OUT/summary.json)")
    e.add_argument("--format", choices=FORMATS, default="options")
    e.add_argument("--output", type=Path, help="file to write (default stdout)")
    e.add_argument("--best", action="store_true",
                   help="the best tuned configuration even when the answer keeps the defaults (then not recommended; "
                        "flags or python)")

    v = sub.add_parser("verify", help="open a DB with an OPTIONS file via rocksdict and db_bench, check the values")
    v.add_argument("options", type=Path)
    v.add_argument("--db-bench")
    v.add_argument("--rocksdb-version", metavar="V")

    u = sub.add_parser("ui", help="start the MLflow UI on the project's tracking store")
    u.add_argument("--mlflow-uri", help="tracking store (default $MLFLOW_TRACKING_URI, else sqlite:///mlruns/mlflow.db)")
    u.add_argument("--port", type=_port, default=5000, help="port on 127.0.0.1 (default 5000)")
    u.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1, this machine only)")
    u.add_argument("--open", action="store_true", help="open the newest study's trials in a browser")

    sub.add_parser("workloads", help="list workload presets")
    s = sub.add_parser("spaces", help="list space presets, or show one")
    s.add_argument("action", nargs="?", choices=("list", "show"), default="list")
    s.add_argument("name", nargs="?", default="default")
    s.add_argument("--scale", type=_positive_float, default=1.0)
    s.add_argument("--workload", default="fillrandom", help="workload whose data size scales the ranges")
    s.add_argument("--rate", type=_positive_float, metavar="OPS",
                   help="writes offered per second, which scale the service space's rate limiter (as tune --rate)")


def _measure_parser(m: argparse.ArgumentParser) -> None:
    m.add_argument("--options", type=Path, metavar="FILE",
                   help="an OPTIONS file (yours, or a study's OUT/OPTIONS.ini); default: the library's defaults")
    m.add_argument("--rate", type=_positive_float, required=True, metavar="OPS",
                   help="writes offered per second (overwrites of random keys)")
    m.add_argument("--read-rate", type=_positive_float, metavar="OPS", help="reads offered per second beside them")
    m.add_argument("--target-data", type=parse_size, default=parse_size("2GiB"), metavar="SIZE",
                   help="the DB's data, loaded before the run (default 2GiB)")
    m.add_argument("--target-memory", type=parse_size, metavar="SIZE",
                   help="the run's memory limit, page cache included (a memory cgroup); default none")
    m.add_argument("--duration", type=_duration, default=60.0, metavar="TIME",
                   help="the run's length (default 60s: long enough for compaction to keep up or fall behind)")
    m.add_argument("--threads", type=at_least(1), default=1, help="writer threads sharing --rate (default 1)")
    m.add_argument("--read-threads", type=at_least(1), default=1, help="reader threads sharing --read-rate")
    m.add_argument("--arrivals", choices=ARRIVALS, default="constant",
                   help="constant gaps between requests, or Poisson arrivals (default constant)")
    m.add_argument("--seed", type=at_least(0), default=1)
    m.add_argument("--key-size", type=at_least(8), default=KEY_SIZE, help=f"bytes per key (default {KEY_SIZE})")
    m.add_argument("--value-size", type=at_least(1), default=VALUE_SIZE, help=f"bytes per value (default {VALUE_SIZE})")
    m.add_argument("--rocksdb-version", metavar="V", help="the driver of this RocksDB version (default the newest)")
    m.add_argument("--work-dir", type=Path, help="where the DB is made (default as tune's)")
    m.add_argument("--slo", metavar="BOUND",
                   help="find the capacity: the highest offered rate that holds BOUND (e.g. 'p99.9<=2ms') with "
                        "99 %% of the requests due completed, from --rate up or down, each rate on a fresh copy "
                        "of one loaded DB")
    m.add_argument("--windows", type=_windows, default=(), metavar="TIME[,TIME...]",
                   help="also the tail of each consecutive window of this length (e.g. 60s,5m): how a percentile "
                        "over a window varies from window to window, and so how long a run must be to rank by it")
    m.add_argument("--background-priority", choices=BACKGROUND, default="normal",
                   help="RocksDB's flush and compaction threads at the request threads' CPU priority, or at the "
                        "lowest (nice 19, Env::LowerThreadPoolCPUPriority), as a service on few cores may run them")
    m.add_argument("--slow-calls", type=parse_latency_arg, default=0.0, metavar="TIME",
                   help="where the time of each RocksDB call slower than TIME (e.g. 1ms) went: WAL, memtable, write "
                        "delay, switching memtables, ..., on a CPU or waiting (RocksDB's PerfContext; its timers "
                        "add to every call's time), and the kernel stacks it waited in (root only)")
    m.add_argument("--json", action="store_true", help="print every figure and the per-second series as JSON")


def cmd_measure(args: argparse.Namespace) -> int:
    rate = Rate(args.rate, args.read_rate or 0.0, args.duration, args.threads, args.read_threads, args.arrivals,
                args.seed, windows=args.windows, background=args.background_priority, slow_call_us=args.slow_calls)
    try:
        return measure_command(args.options, rate, args.target_data, args.target_memory, args.rocksdb_version,
                               args.work_dir, args.json, args.slo, (args.key_size, args.value_size))
    except (OpenLoopError, workdir.WorkDirError, MemoryLimitError, ValueError) as exc:
        print(f"rocksdb-tuner: error: {exc}", file=sys.stderr)
        return 1 if isinstance(exc, DriverFailed) else EXIT_USAGE
    except KeyboardInterrupt:
        print("\ninterrupted: the DB it made is removed", file=sys.stderr)
        return 130


def tune_config(args: argparse.Namespace) -> TuneConfig:
    """`tune`'s options as a :class:`TuneConfig`, a part from each group of `tune --help`."""
    return TuneConfig(
        measurement=MeasurementConfig(
            workload=args.workload, backend=args.backend or ("rate" if args.rate is not None else "db_bench"),
            command=args.program, load=args.load, rate=args.rate, read_rate=args.read_rate or 0.0,
            arrivals=args.arrivals, background_priority=args.background_priority, slo=args.slo,
            capacity_rounds=args.capacity_rounds, scale=args.scale,
            duration=args.duration, search_duration=args.search_duration, db_snapshot=args.db_snapshot, drain=not args.no_drain,
            defaults=args.defaults,
            baselines=not args.no_baselines, repeats=args.repeats, trial_timeout=args.trial_timeout),
        target=TargetConfig(
            target_data=args.target_data, target_memory=args.target_memory, base_options=args.base_options,
            memory_limit=args.memory_limit, memory_budget=args.memory_budget),
        search=SearchConfig(
            space=args.space, trials=args.trials if args.trials is not None or args.budget else 20,
            budget=args.budget, fidelity=args.fidelity, sampler=args.sampler,
            objective=args.objective,
            prefer=args.prefer, max_p99_us=args.max_p99_us, max_write_amp=args.max_write_amp,
            constraints=tuple(args.constraint or ()), seed=args.seed,
            pruner=args.pruner, pruner_warmup=args.pruner_warmup, warm_start=args.warm_start, library=args.library,
            starts=not args.no_starts, any_cost=args.any_cost),
        revalidation=_revalidation(args),
        execution=ExecutionConfig(
            executor=args.executor, parallel=args.parallel, ray_address=args.ray_address,
            cpus_per_trial=args.cpus_per_trial, one_trial_per_node=args.one_trial_per_node,
            allow_mixed_db_bench=args.allow_mixed_db_bench, db_bench=args.db_bench,
            rocksdb_version=args.rocksdb_version, work_dir=args.work_dir),
        tracking=TrackingConfig(
            study=args.study, storage=args.storage, out=args.out, mlflow=not args.no_mlflow,
            mlflow_uri=args.mlflow_uri, experiment=args.experiment, plots=not args.no_plots),
    )


def _revalidation(args: argparse.Namespace) -> RevalidationConfig:
    """The re-validation asked for; its sizes given (--revalidate, --revalidate-rounds,
    --revalidate-max-rounds) run as asked, not fitted to the search's machine time."""
    sizes = {"revalidate": args.revalidate, "revalidate_rounds": args.revalidate_rounds,
             "revalidate_max_rounds": args.revalidate_max_rounds}
    given = {k: v for k, v in sizes.items() if v is not None}
    if args.revalidate_rounds is not None and args.revalidate_max_rounds is None:  # at least N: at most no fewer
        given["revalidate_max_rounds"] = max(args.revalidate_rounds, RevalidationConfig.revalidate_max_rounds)
    return RevalidationConfig(**given, revalidate_as_asked=bool(given), interval_target=args.interval_target,
                              revalidation_time=args.revalidation_time, ablation=not args.no_ablation, baseline=args.baseline,
                              confirm_scale=args.confirm_scale, serve_rate=args.serve_rate, serve_rounds=args.serve_rounds,
                              serve_duration=args.serve_duration)


def cmd_tune(args: argparse.Namespace) -> int:
    study = Study(tune_config(args), ConsoleProgress())
    try:
        with stop_signals(STOPS):  # SIGTERM/SIGHUP take the Ctrl-C path: clean up, then exit
            result = study.run()
    except KeyboardInterrupt:
        name, status = stop_exit()
        print(f"\ninterrupted ({name}): finished trials are saved. Resume with: {_resume(args, study)}",
              file=sys.stderr)
        return status
    except EnvironmentFault as exc:
        print(_stopped(exc, f"Finished trials are saved; fix it, then resume with: {_resume(args, study)}"),
              file=sys.stderr)
        return os.EX_TEMPFAIL
    if args.json:
        print(result.summary.to_json())
    else:
        print(closing_table(result.summary))
    return 0 if result.summary.best else 1


def _stopped(exc: EnvironmentFault, resume: str) -> str:
    """The one line a study stopped by an environment fault ends with, then ``resume``."""
    return (f"\nstopped: {exc.fault} ({exc.reason}). Not the configuration's failure: no sampler learns from it, "
            f"and what it stopped runs again. {resume}")


def _resume(args: argparse.Namespace, study: Study) -> str:
    """The command that resumes ``study`` as ``args`` started it: its study file, if any, and the flags that
    decide what it measures and how it chooses, as they came out (the command line's over the file's)."""
    m = study.config.measurement
    measured = f"--workload {args.workload or study.parts.workload.name}" if BACKENDS[m.backend].workloads else \
        f"--backend {m.backend}" + (f" --command {shlex.quote(args.program)}" if args.program else "") \
        + (f" --load {shlex.quote(args.load)}" if args.load else "") \
        + "".join(f" {flag} {value:g}" for flag, value in (("--rate", args.rate), ("--read-rate", args.read_rate)) if value) \
        + (f" --arrivals {args.arrivals}" if args.rate and args.arrivals != "constant" else "") \
        + (f" --background-priority {args.background_priority}" if args.rate and args.background_priority != "normal"
           else "")
    # what measures and what chooses: the build, what runs start from, the sampler, the re-validation
    measured += (f" --rocksdb-version {args.rocksdb_version}" if args.rocksdb_version else "") \
        + (f" --db-bench {shlex.quote(args.db_bench)}" if args.db_bench else "") \
        + (f" --defaults {args.defaults}" if args.defaults != LIBRARY else "") \
        + (f" --seed {args.seed}" if args.seed is not None else "") \
        + (f" --sampler {args.sampler}" if args.sampler != "auto" else "") \
        + (f" --revalidate {args.revalidate}" if args.revalidate is not None else "") \
        + (" --no-mlflow" if args.no_mlflow else "")
    if args.slo:  # the capacity searches
        measured += f" --slo {shlex.quote(args.slo)}" \
            + (f" --capacity-rounds {args.capacity_rounds}" if args.capacity_rounds != 1 else "")
    if args.serve_rate is not None:  # the answer served at a rate
        measured += f" --serve-rate {args.serve_rate if isinstance(args.serve_rate, str) else f'{args.serve_rate:g}'}" \
            + (f" --serve-rounds {args.serve_rounds}" if args.serve_rounds != RevalidationConfig.serve_rounds else "")
    if (args.slo or args.serve_rate is not None) and not args.rate \
            and args.serve_duration != RevalidationConfig.serve_duration:  # and their runs' length
        measured += f" --serve-duration {args.serve_duration:g}s"
    study_file = f" --from {shlex.quote(str(args.study_file))}" if args.study_file else ""  # and its other flags
    return (f"rocksdb-tuner tune{study_file} --study {study.name} --out {study.out} {measured}"
            + (f" --space {args.space}" if args.space else "")
            + (f" --trials {args.trials}" if args.trials else "") + (f" --budget {args.budget:g}s" if args.budget else "")
            + (f" --revalidation-time {args.revalidation_time:g}s" if args.revalidation_time else "")
            + (f" --objective {args.objective}" if args.objective else "") + (" --any-cost" if args.any_cost else "")
            + "".join(f" --constraint {shlex.quote(b.describe().replace(' ', ''))}" for b in args.constraint or ())
            + "".join(f" {flag} {value}" for flag, value in (
                ("--scale", args.scale), ("--target-data", args.target_data), ("--target-memory", args.target_memory),
                ("--base-options", args.base_options), ("--duration", args.duration and f"{args.duration:g}s"),
                ("--search-duration", args.search_duration and f"{args.search_duration:g}s"))
                if value is not None))


def cmd_doctor(args: argparse.Namespace) -> int:
    host = Context.of_host()
    where = args.work_dir or workdir.default_work_dir()
    print(f"cores:        {host.cores}")
    print(f"memory:       {host.ram / GiB:.1f} GiB")
    try:
        usage = shutil.disk_usage(where if where.exists() else where.parent)
        print(f"free disk:    {usage.free / GiB:.1f} GiB in {where} (trial DBs go there)")
    except OSError as exc:
        print(f"free disk:    unknown for {where}: {exc.strerror}")
    db = probe(args.db_bench, args.rocksdb_version)
    print(f"db_bench:     {db.path} (found via {db.source}; a study uses it unless told otherwise)")
    print(f"version:      {db.version}")
    print(f"build:        {db.build}")
    print(f"flags:        {len(db.flags)} known to --help")
    if db.assertions:
        print("WARNING: assertion build: slower and skews CPU vs I/O; 'make db_bench' builds a release one.")
    try:
        defaults = defaults_of(db)
        print(f"defaults:     {defaults.describe()}")
        if defaults.flags:
            print(f"              set where db_bench's own differ: {defaults.command_line()}")
        for line in defaults.unset:
            print(f"              still db_bench's (no flag sets it): {line if len(line) <= 100 else line[:97] + '...'}")
    except DefaultsError as exc:
        print(f"defaults:     unreadable: {exc}")
    print("all builds:   (pick one with --rocksdb-version V or --db-bench PATH)")
    for path, source in installed():
        try:
            other = db if path == db.path else probe_path(path, source)
            print(f"  {other.version:<9} {other.build:<38} {path} ({source})")
        except DbBenchError as exc:
            print(f"  {'?':<9} {'does not run':<38} {path} ({source}): {exc}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    best = load_best(args.summary, tuned=args.best)
    if best.note:
        print(f"note: {best.note}", file=sys.stderr)
    text = render(best, args.format)
    if args.output:
        args.output.write_text(text)
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    if not args.options.is_file():
        raise ExportError(f"{args.options}: no such file")
    db = probe(args.db_bench, args.rocksdb_version)
    checks, verdict, notes = verify(args.options, db.path)
    for note in notes:
        print(f"note: {note}")
    print(f"{'key':<52} {'in file':<24} {'read back':<24} ok")
    for c in checks:
        print(f"{c.key:<52} {str(c.in_file)[:24]:<24} {str(c.read_back)[:24]:<24} {'yes' if c.ok else 'NO'}"
              + (f"  ({c.note})" if c.note else ""))
    print(f"db_bench {db.version} ({db.build}) with --options_file: {verdict}")
    good = all(c.ok for c in checks) and verdict == "accepted"
    print("verified" if good else "NOT verified")
    return 0 if good else 1


def cmd_ui(args: argparse.Namespace) -> int:
    from tuner.ui import serve

    return serve(args.mlflow_uri, args.host, args.port, args.open)


def cmd_workloads(_: argparse.Namespace) -> int:
    host = Context.of_host()
    for name in workload_presets():
        w = load_workload(name).resolve(1.0, host)
        phases = " -> ".join(f"{p.name}[{','.join(p.benchmarks)}]{'*' if p.scored else ''}" for p in w.phases)
        if w.preload is not None:
            each = "each run with its options" if w.preload_each_run else "once"
            phases = f"({each}: {','.join(w.preload.benchmarks)}) " + phases
        timed = (f", {w.duration:g} s timed phases" + (f" ({w.search_duration:g} s in the search)" if w.search_duration
                                                         else "")) if w.duration else ""
        kind = w.loading_each_run().kind
        print(f"{name:<22} {kind:<9} {w.data_bytes() / 1e6:7.0f} MB{timed}  {phases}")
        print(f"{'':<22} {w.description}")
    print("\n* = scored phase. Sizes at --scale 1. load: every run fills its DB from empty (with its own options); "
          "preloaded: the DB is built once per study and every run starts on a checkpoint of it (--target-data "
          "sizes both).")
    return 0


def cmd_spaces(args: argparse.Namespace) -> int:
    if args.action == "list":
        for name in space_presets():
            print(f"{name:<12} {load_space(name).description}")
        return 0
    host = Context.of_host()
    workload = load_workload(args.workload).resolve(args.scale, host)
    extra = BACKENDS["rate"].context_names(TuneConfig(rate=args.rate)) if args.rate else {}
    ctx = Context(cores=host.cores, ram=host.ram, data=workload.data_bytes(), scale=args.scale, budget=host.ram // 4,
                  extra=extra)
    space = load_space(args.name).resolve(ctx)
    print(f"space {space.name} on this host ({host.cores} cores, {host.ram / GiB:.1f} GiB, "
          f"data {ctx.data / 1e6:.0f} MB of workload {workload.name}, budget {ctx.budget / GiB:.1f} GiB):")
    for p in space.parameters:
        cond = f" when {p.when}" if p.when else ""
        print(f"  {p.name:<34} {p.describe():<34} --{p.flag} | {p.options_key}{cond}")
    for c in space.constraints:
        print(f"  constraint {c.name}: {c.expr}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    handlers = {"tune": cmd_tune, "doctor": cmd_doctor, "workloads": cmd_workloads,
                "spaces": cmd_spaces, "export": cmd_export, "verify": cmd_verify, "ui": cmd_ui,
                "measure": cmd_measure}
    try:
        return handlers[args.command](args)
    except INPUT_ERRORS as exc:
        print(f"rocksdb-tuner: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
