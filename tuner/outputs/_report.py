"""A finished study's outputs: ``summary.json``, ``OPTIONS.ini`` and the closing comparison table."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from datetime import UTC
from pathlib import Path
from typing import Any

from optuna.trial import FrozenTrial

from objectives.scores import label
from search_spaces import host_cores, host_cpu, host_ram_bytes
from tuner import options_file, ranking
from tuner.backends import default_config
from tuner.fmt import fmt_bytes, fmt_ops, fmt_value
from tuner.model import DEFAULT_BASELINE, StudySnapshot, TuneResult, measured_here
from tuner.outputs._answer import (
    answer,
    answer_of,
    gain_lines,
    ratio_text,
    resolution_words,
    runs_workloads,
    side_by_side,
    target_lines,
)
from tuner.outputs._explain import explain
from tuner.stats import gain, improvement
from tuner.summary import BaselineRun, BestTrial, ComparisonRow, CostlyBest, Ratio, Revalidation, Summary, TrialRow
from tuner.trials import BaselineRecord, TrialRecord


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _trial_row(t: FrozenTrial) -> TrialRow:
    r = TrialRecord.of(t)
    row: dict[str, Any] = {"number": t.number, "outcome": r.outcome or t.state.name.lower(), "params": t.params}
    for key, value in (("metrics", r.metrics), ("reason", r.fail_reason), ("provenance", r.provenance)):
        if value is not None:
            row[key] = value
    return TrialRow.from_dict(row, f"trial {t.number}")


_SHOWN = ("ops_per_sec", "p99_us", "write_amp", "write_amp_logical", "db_size_bytes")
# the closing table's columns; disk: the DB's size after the run (universal compaction may hold twice the data)
_WIDTHS = {"ops_per_sec": 12, "p99_us": 10, "write_amp": 13, "db_size_bytes": 10}


def comparison(baselines: list[BaselineRun], best: BestTrial | None, revalidation: Revalidation | None = None,
               metric: str = "ops_per_sec", maximize: bool = True) -> list[dict[str, Any]]:
    """Rows for the baselines, the best and (when there is one) the minimal configuration. After a
    re-validation: medians of its estimation rounds with their spread, and each row's ratio to the
    reference paired by round (interval and verdict); without (or when the best failed in all of
    them): single runs, ratios of single runs. Ratios are of ``metric`` (the study's), above 1
    better (tuner.stats.improvement)."""
    shown = tuple(dict.fromkeys((metric, *_SHOWN)))
    measured = revalidation.measured(metric) if revalidation else {}
    if revalidation and revalidation.best in measured:
        names = [b.name for b in baselines if b.name in measured] + [revalidation.best]
        rows: list[dict[str, Any]] = [
            {"name": n if measured[n].trial is None else f"best (trial {measured[n].trial})",
             **{k: measured[n].median(k) for k in shown}, "spread": measured[n].spread} for n in names]
        rows[-1]["vs_reference"] = revalidation.best_vs_reference
        reference = measured.get(DEFAULT_BASELINE)
        default = reference.samples(metric) if reference else None
        for name, row in zip(names, rows):  # ratios paired by round, as the verdict's
            row["vs_default"] = gain(measured[name].samples(metric), default, maximize).ratio if default else None
        minimal = revalidation.minimal
        if minimal:
            m = next(r for r in minimal.configurations if r.name == "minimal")
            rows.append({"name": f"minimal ({len(minimal.kept)} options)", **{k: m.median(k) for k in shown},
                         "spread": m.spread, "vs_reference": minimal.vs_reference, "vs_default": None})
        return rows
    rows = [{"name": b.name, **{k: b.metrics.get(k) for k in shown}} for b in baselines]
    if best is not None:
        rows.append({"name": f"best (trial {best.trial})", **{k: best.metrics.get(k) for k in shown}})
    default_value = next((r[metric] for r in rows if r["name"] == DEFAULT_BASELINE), None)
    for row in rows:
        row["vs_default"] = improvement(row[metric], default_value, maximize) if default_value and row[metric] else None
    return rows


def _columns(summary: Summary) -> list[str]:
    """The comparison's metric columns: the study's metric first (its range follows it), then ops/s,
    P99, write amp and disk; of a program's, only those it reported."""
    metric = summary.objective_metric
    others = [k for k in _WIDTHS if k != metric]
    if not runs_workloads(summary):  # a program's metrics: only those it reported
        others = [k for k in others if any(row.value(k) is not None for row in summary.comparison)]
    return [metric, *others]


def _cell(row: ComparisonRow, key: str) -> str:
    value, logical = row.value(key), row.value("write_amp_logical")
    if key == "write_amp" and value is not None and logical is not None:
        return f"{value:.2f} / {logical:.2f}"
    if key in ("p99_us", "write_amp"):
        return "-" if value is None else f"{value:.2f}"
    if key == "db_size_bytes":
        return fmt_bytes(value)
    return fmt_ops(value) if key == "ops_per_sec" else fmt_value(value)


def _cells(row: ComparisonRow, columns: list[str]) -> list[str]:
    """A comparison row as printed: the study's metric and its spread, the other ``columns`` (write amp
    stored / logical), and the ratio to the default."""
    shown = fmt_ops if columns[0] == "ops_per_sec" else fmt_value
    s = row.spread
    spread = f"{shown(s.min)}-{shown(s.max)}" if s else "1 run"
    ratio = "-" if row.vs_default is None else f"{row.vs_default:.2f}x"
    return [_cell(row, columns[0]), spread, *(_cell(row, k) for k in columns[1:]), ratio]


def _measured_as(summary: Summary) -> list[str]:
    """What the comparison's figures are: db_bench's sustained or burst ops/s, or the program's own
    metrics; and, for another metric than ops/s, which way its ratios go."""
    if summary.command is None and not runs_workloads(summary):  # the rate backend's driver
        lines = ["open loop at the offered rate: latency from each request's due time, over the run and its settle; "
                 "ops/s: completed; write amp: flushed and compacted / written bytes"]
    elif not runs_workloads(summary):
        lines = [f"metrics as the program printed them ({summary.command})"]
    elif summary.drain:
        lines = ["ops/s: sustained (deferred flushes and compactions charged); write amp: stored / logical bytes; "
                 "disk: the DB's size after the run"]
    else:
        lines = ["ops/s: burst (--no-drain: deferred flushes and compactions not charged); write amp: stored / logical; "
                 "disk: the DB's size after the run"]
    beside = side_by_side(summary)
    if beside and summary.revalidation and summary.revalidation.best:
        lines.append("figures and vs default: the re-validation's rounds, one run at a time (the search's trials ran "
                     f"beside {summary.slot.neighbours if summary.slot else 0} other run(s) at once)")
    elif beside:
        lines.append(f"vs default: single runs, {beside}")
    metric = summary.objective_metric
    if metric != "ops_per_sec":
        maximize = summary.objective_maximize
        lines.append(f"vs default: how many times better {metric} is than rocksdb-default's ("
                     + ("this row's / the default's: higher is better)" if maximize else
                        "the default's / this row's: lower is better)"))
    best = summary.best
    if best and best.start == DEFAULT_BASELINE and any(row.name == DEFAULT_BASELINE for row in summary.comparison):
        lines.append(f"best (trial {best.trial}) is {DEFAULT_BASELINE}'s own configuration (its start): its row and "
                     f"{DEFAULT_BASELINE}'s measure one configuration twice, and their ratio is how far its measurements "
                     "move")
    return lines


def _better(summary: Summary) -> dict[str, str]:
    """The words of a ratio's verdict for the study's metric: faster / slower for ops/s."""
    metric = summary.objective_metric
    if metric == "ops_per_sec":
        return {"faster": "faster", "slower": "slower"}
    return {"faster": f"better {metric}", "slower": f"worse {metric}"}


def _resolution_lines(found: Ratio) -> list[str]:
    """For a tie, what its rounds could tell: a tie of rounds too noisy to see the estimate is not a "no gain"."""
    words = resolution_words(found, "--revalidate-rounds", "; with --budget, one that fits them")
    return [words] if words else []


NOISY_AT_RATE = 0.5  # the reference's coefficient of variation over the rounds above which a rate study says so


def verdict_lines(summary: Summary) -> list[str]:
    """What the study's answer is worth: the re-validated gain against the reference, said plainly."""
    reval = summary.revalidation
    if not reval or not reval.best:
        if not summary.best or (reval and reval.kept_out) or summary.answer is not None:
            return []  # the cost guard kept every trial out, or the capacity stage confirmed: the answer says so
        return [f"single runs, not re-validated: the best of {summary.trials.complete} single runs is "
                "partly the luckiest; run with --revalidate K (the default) for a gain that holds up"]
    ref, found, words = reval.reference, reval.best_vs_reference or Ratio(), _better(summary)
    text = f"best (trial {reval.best_trial}) vs {ref}: {ratio_text(found)}"
    keep = "keep your current configuration" if ref not in summary.breaks else f"but {ref} breaks your constraints"
    advice = {"faster": f"{words['faster']}.", "slower": f"{words['slower']}: {keep}.",
              "tie": f"no measurable difference: {keep}.",
              "not measured": "not measured."}[found.verdict or "not measured"]
    lines = [f"{text}: {advice}", *_resolution_lines(found)]
    lines += [f"best (trial {reval.best_trial}) vs {name}: {ratio_text(r)}: {words.get(str(r.verdict), r.verdict)}"
              for name, r in reval.vs.items() if name != ref]
    select = reval.select
    if reval.noise_cv_reference is not None:
        lines.append(f"noise: {ref}'s coefficient of variation over the rounds {100 * reval.noise_cv_reference:.1f} %; "
                     "the winner was chosen on other rounds than these"
                     + (f" ({select.rounds} round(s) among the top "
                        f"{sum(1 for r in select.configurations if r.trial is not None)})" if select else ""))
        if summary.backend == "rate" and reval.noise_cv_reference > NOISY_AT_RATE:
            rate = f"{summary.offered.writes:.0f}" if summary.offered else "OPS"
            lines.append(f"noise: at this rate {ref}'s tail varied over the rounds by more than half its mean, and a "
                         "paired comparison of such runs needs many rounds: a tail over a window moves less the longer "
                         f"the window (`rocksdb-tuner measure --rate {rate} --duration 20m --windows 60s` shows how "
                         "much), so longer runs (--duration) rank configurations where more short rounds rank noise")
    if select and select.served_out:
        rate = f" at {summary.served.rate:,.0f} writes/s" if summary.served else ""
        then = f"passed over for {select.winner}" if select.winner not in select.served_out else \
            f"none served within it, so the fastest, {select.winner}, went on"
        lines.append(f"served{rate} beside {DEFAULT_BASELINE}, finalist(s) {', '.join(select.served_out)} served beyond "
                     f"the served guard ({ranking.served_margin_words()}): {then}")
    minimal = reval.minimal
    if minimal:
        lines.append(f"minimal configuration ({', '.join(minimal.kept)}; the rest at {ref}'s values): "
                     f"{ratio_text(minimal.vs_reference)} vs {ref}, {ratio_text(minimal.vs_full)} vs the full best")
    change = select.rank_correlation if select else None
    if change:
        size = change.confirm_data_bytes  # none for a program at its own size
        where = f"--confirm-scale {change.confirm_scale:g}" if change.confirm_scale else \
            (f"the target ({fmt_bytes(size)}" if size else "the re-validation (") + (
                f"{', ' if size else ''}{change.confirm_duration_seconds:g} s "
                f"{'phases' if runs_workloads(summary) else 'runs'})" if change.confirm_duration_seconds else ")")
        tau = change.kendall_tau
        lines.append(f"at {where}: the finalists' order against the search's Kendall tau "
                     f"{f'{tau:.2f}' if tau is not None else 'n/a'}; "
                     + (f"the answer changed: {change.search_best} led the search, {change.confirmed_best} "
                        "led there" if change.changed else f"{change.search_best} led both"))
    return lines


def _why(summary: Summary) -> list[str]:
    """The explanation lines: each tuned option of the best, measured (ablation) where it was."""
    explanation = summary.explanation
    if not explanation or not explanation.options:
        return []
    measured = any(row.ablation for row in explanation.options)
    head = ("why, option by option: the best against itself with each option put back to the reference's value "
            "(measured in the re-validation rounds); trends across trials are correlations, not causes:" if measured
            else "why, option by option (vs the values rocksdb-default ran with; trends are correlations across "
                 "trials, not causes):")
    return ["", head] + [f"  {row.text}" for row in explanation.options]


def closing_table(summary: Summary) -> str:
    columns = _columns(summary)
    widths = [max(_WIDTHS.get(columns[0], 12), len(label(columns[0]))), 19, *(_WIDTHS[k] for k in columns[1:]), 11]
    heads = [label(columns[0]), "range", *(label(k) for k in columns[1:]), "vs default"]
    header = " ".join([f"{'configuration':<28}", *(f"{h:>{w}}" for h, w in zip(heads, widths))])
    lines = [*target_lines(summary), "", header, "-" * len(header)] if summary.target else \
        [header, "-" * len(header)]
    for row in summary.comparison:
        lines.append(" ".join([f"{row.name:<28}", *(f"{c:>{w}}" for c, w in zip(_cells(row, columns), widths))]))
    lines += _measured_as(summary)
    if summary.recommendation:
        lines.append(summary.recommendation)
    verdict = verdict_lines(summary)
    lines += ["", *verdict] if verdict else []
    gains = gain_lines(summary)
    lines += ["", *gains] if gains else []
    best = summary.best
    if best:
        lines.append("")
        kept = summary.answer is not None and summary.answer.recommend == "reference"
        lines.append(("best tuned configuration, not recommended " if kept else "best configuration ") +
                     _flags(summary, best.flags))
        if not best.feasible:
            lines.append("NOTE: no trial met the budgets; this is the least-violating one.")
        if best.provenance:
            counts = ", ".join(f"{n} {kind}" for kind, n in sorted((summary.provenance or {}).items()))
            lines.append(f"chosen as: {best.provenance} (the trials counted: {counts})")
        lines += _why(summary)
    else:
        lines.append("")
        lines.append("no trial completed: see the failures in summary.json")
    return "\n".join(lines)


def _flags(summary: Summary, flags: dict[str, Any]) -> str:
    """A configuration as its measurement took it: db_bench's flags, or the options a program read."""
    if runs_workloads(summary):
        return "(db_bench flags): " + " ".join(f"--{k}={v}" for k, v in flags.items())
    return "(options, in OPTIONS.ini for the program): " + " ".join(f"{k}={v}" for k, v in flags.items())


def comparison_markdown(summary: Summary) -> str:
    """The comparison as a Markdown table (``comparison.md``): defaults vs hand-found vs best."""
    build, columns = summary.build, _columns(summary)
    what = (f"{summary.workload} ({fmt_bytes(summary.data_bytes)} of data per trial)"
            if runs_workloads(summary) else f"the program `{summary.command}`")
    lines = [f"# {summary.study}: {what}" + (f", {build.program} {build.version} ({build.kind})" if build else ""), "",
             "| configuration | " + " | ".join([label(columns[0]), "range", *(
                 "write amp (stored / logical)" if k == "write_amp" and runs_workloads(summary) else label(k)
                 for k in columns[1:]),
                 "vs rocksdb-default"]) + " |",
             "|---|" + "---:|" * (len(columns) + 2)]
    for row in summary.comparison:
        lines.append("| " + " | ".join((row.name, *_cells(row, columns))) + " |")
    lines += [""] + [f"{line}" for line in verdict_lines(summary)] + [""] + gain_lines(summary) + \
        ([""] + target_lines(summary) if summary.target else [])
    best = summary.best
    if best:
        kind, _, flags = _flags(summary, best.flags).partition(": ")
        lines += ["", f"Best configuration {kind}: `{flags}`"]
    lines += [line.replace("  ", "- ", 1) if line.startswith("  ") else line for line in _why(summary)]
    if summary.revalidation and summary.revalidation.best:
        lines += ["", ("ops/s, P99, write amp and disk" if columns[0] == "ops_per_sec" and runs_workloads(summary)
                       else "The figures")
                  + " are medians of the re-validation's estimation rounds, each round in a "
                  "fresh random order on the same machine in the same study, one run at a time; ratios are paired by "
                  "round."]
    else:
        beside = side_by_side(summary)
        lines += ["", "Each row is a single measurement on the same machine in the same study (--revalidate 0)"
                  + (f": {beside}." if beside else ".")]
    return "\n".join(lines) + "\n"


def _best(snapshot: StudySnapshot) -> BestTrial | None:
    best_trial = snapshot.best()
    if best_trial is None:
        return None
    r = TrialRecord.of(best_trial)
    best: dict[str, Any] = {
        "trial": best_trial.number,
        "params": best_trial.params,
        "flags": snapshot.space.config(best_trial.params).flags(),
        "metrics": r.metrics,
        "feasible": ranking.feasible(best_trial),
        "log_dir": r.log_dir,
        "provenance": r.provenance,
    }
    if r.enqueued is not None:
        best["start"] = r.enqueued
    if r.options_mismatch is not None:
        best["options_mismatch"] = r.options_mismatch
    return BestTrial.from_dict(best, "best")


def provenance_counts(trials: Iterable[FrozenTrial]) -> dict[str, int]:
    """How the counted trials were chosen: trials per provenance (start, random initial point, ...)."""
    groups = ranking.by_outcome(trials)
    return dict(Counter(TrialRecord.of(t).provenance or "not recorded" for k in ranking.COUNTED for t in groups[k]))


def _when(snapshot: StudySnapshot) -> dict[str, str] | None:
    """When the study's trials ran (UTC): the first start and the last end, from its storage."""
    here = [(t.datetime_start, t.datetime_complete or t.datetime_start) for t in measured_here(snapshot.trials)
            if t.datetime_start is not None]
    if not here:
        return None
    first = min(start for start, _ in here)
    last = max(end for _, end in here)
    return {k: v.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC") for k, v in
            (("first_trial_started", first), ("last_trial_ended", last))}


def summarize(snapshot: StudySnapshot, mlflow: dict[str, Any] | None = None) -> Summary:
    """The content of ``summary.json``; ``mlflow`` says where the study is tracked."""
    groups = snapshot.by_outcome()
    best = _best(snapshot)
    baselines = [BaselineRun.from_dict(
        {"name": b.name, "params": b.flags, "doc": b.doc, "state": b.state, "metrics": b.metrics,
         "neighbours": b.neighbours, **({"reason": b.reason} if b.reason is not None else {})}, "baselines")
        for b in snapshot.baselines]
    reval = snapshot.revalidation
    host = snapshot.space.context
    assert host is not None
    search, measurement = snapshot.config.search, snapshot.config.measurement
    data: dict[str, Any] = {
        "study": snapshot.name,
        "workload": snapshot.workload.name,
        "backend": measurement.backend,
        "command": measurement.command,
        "space": snapshot.space.name,
        "space_searched": {**snapshot.space.describe(), "widened": list(snapshot.widened)},  # holding the references
        "sampler": search.sampler,
        "objective": snapshot.score.objective,
        "objective_description": snapshot.score.describe(),
        "objective_metric": snapshot.score.metric,  # what gains are ratios of
        "objective_maximize": snapshot.score.maximize,
        "seed": search.seed,
        "run_seed": snapshot.run_seed,
        "scale": measurement.scale,
        "drain": snapshot.workload.drain,
        "data_bytes": snapshot.workload.data_bytes(),
        "build": snapshot.build,
        "defaults": snapshot.defaults.to_dict() if snapshot.defaults is not None else None,
        "host": {"cpu": host_cpu(), "cores": host_cores(), "ram_bytes": host_ram_bytes(),
                 "memory_budget_bytes": host.budget},
        "slot": snapshot.slot,
        "memory": snapshot.memory,
        "storage": snapshot.storage,
        "trials": {k: len(v) for k, v in groups.items()},
        "machine_seconds": snapshot.machine_seconds(),
        "when": _when(snapshot),
        "budget_seconds": search.budget,
        "fidelity": list(search.fidelity) if search.fidelity else None,
        "fidelity_agreement": snapshot.fidelity_agreement,
        "seeded": list(snapshot.seeded),
        "startup": snapshot.startup,
        "provenance": provenance_counts(snapshot.trials),
        "best": best,
        "baselines": baselines,
        "repeats": measurement.repeats,
        "revalidation": reval,
        "comparison": comparison(baselines, best, reval, snapshot.score.metric, snapshot.score.maximize),
        "explanation": explain(snapshot, best, reval) if best else None,
        "mlflow": mlflow,
        "failures": [{"trial": t.number, "reason": TrialRecord.of(t).fail_reason or ""} for t in groups["failed"]][:50],
        "target": snapshot.target,
        "preload": snapshot.preload,
        "answer": None,  # from the rest, below
        "offered": {"writes": measurement.rate, "reads": measurement.read_rate, "arrivals": measurement.arrivals,
                    "background": measurement.background_priority} if measurement.rate else None,
        "capacity": snapshot.capacity,
        "served": snapshot.served,
        "served_guard": list(snapshot.served_guard),
        "costly": _costly(snapshot, baselines),
        "cost_guard": not search.any_cost,
        "breaks": {name: list(broken) for name, broken in snapshot.breaks.items()},
        "budgets": [{"metric": b.metric, "limit": b.limit, "upper": b.upper, "flag": b.flag}
                    for b in snapshot.score.budgets],
    }
    if len(snapshot.directions) > 1:
        data["pareto"] = [_trial_row(t) for t in snapshot.pareto_front()]
        weights = search.prefer
        rule = (f"weights {', '.join(f'{k} {w:g}' for k, w in weights.items())} (--prefer)" if weights
                else "equal weights: the front's knee")
        data["recommendation"] = (f"best = the Pareto front member ({len(data['pareto'])} trials) nearest the "
                                  f"ideal point, objectives scaled to [0, 1] over the front, {rule}")
    summary = Summary.from_dict(data)
    return replace(summary, answer=answer(summary))


def _write_options(snapshot: StudySnapshot, text: str, params: dict[str, Any], name: str) -> None:
    """A configuration's OPTIONS file (``text``), with the values it ran with that RocksDB leaves out of
    one (the block cache's capacity, the rate limiter's rate)."""
    values = {p.options_key: params[p.name] for p in snapshot.space.parameters if params.get(p.name) is not None}
    write_atomic(snapshot.out / name, options_file.with_unwritten(text, values))


def _write_changed(snapshot: StudySnapshot, best: BestTrial, reference: str) -> None:
    """``OPTIONS.minimal.ini`` when no re-validation measured which options matter: the searched options
    the answer sets to other values than ``reference`` ran with, and nothing else, labelled not measured."""
    ref = next(b for b in snapshot.baselines if b.name == reference)
    text, params = (Path(best.log_dir) / "OPTIONS").read_text(), snapshot.space.parameters
    ran = {**default_config(snapshot.found, snapshot.workload, [p.flag for p in params]).flags(), **ref.flags}
    unwritten = {p.options_key for p in params if p.options_key in options_file.NOT_SERIALIZED}
    written = options_file.differing(text, _kept_options(snapshot, ref, best),
                                     {p.options_key for p in params} - unwritten)
    changed = {p.options_key: best.params[p.name] for p in params if p.name in best.params and (
        p.options_key in written or p.options_key in unwritten
        and float(best.params[p.name] or 0) != float(ran.get(p.flag) or 0))}
    label = (f"# The options trial {best.trial} sets to other values than {reference} ran with "
             f"({len(changed)} of the {len(params)} searched).\n"
             "# Which of them matter was not measured (no ablation ran: --no-ablation, or the study's time "
             "allowed none).\n"
             "# Set them in the OPTIONS you run: OPTIONS.ini is the whole configuration, and a DB opened with "
             "this file alone\n# gets RocksDB's default for every option it leaves out.\n")
    write_atomic(snapshot.out / "OPTIONS.minimal.ini",
                 label + options_file.with_unwritten(options_file.only(text, set(changed)), changed))


def _kept_options(snapshot: StudySnapshot, ref: BaselineRecord, best: BestTrial) -> str:
    """The OPTIONS file of the reference a study keeps: as its runs wrote it (its baseline run, else a
    re-validation round), else the file it was given (--baseline FILE); when none of its runs left one
    (all failed, e.g. killed for memory), the ``best``'s (the same workload and RocksDB) with each searched
    option at the value the reference runs it with, saying so in its first line."""
    flags = ref.flags
    rounds = sorted((snapshot.out / "revalidation-estimate" / ref.name).glob("round-*/OPTIONS"))
    given = [Path(flags["options_file"])] if "options_file" in flags else []
    logged = [Path(ref.log_dir) / "OPTIONS"] if ref.log_dir else []
    found = next((path for path in (*logged, *rounds, *given) if path.is_file()), None)
    if found is not None:
        return found.read_text()
    space = snapshot.space
    ran = {**default_config(snapshot.found, snapshot.workload, [p.flag for p in space.parameters]).flags(), **flags}
    values = {p.options_key: ran[p.flag] for p in space.parameters
              if p.flag in ran and p.options_key not in options_file.NOT_SERIALIZED}
    return (f"# {ref.name}: none of its runs left an OPTIONS file; this is the best's (trial {best.trial}) with "
            f"the searched options at {ref.name}'s values\n"
            + options_file.with_values((Path(best.log_dir) / "OPTIONS").read_text(), values))


def _costly(snapshot: StudySnapshot, baselines: list[BaselineRun]) -> CostlyBest | None:
    """The search's best trial when the cost guard kept it from the re-validation's finalists (its
    search run over rocksdb-default's beyond ranking.COST_MARGINS); None without a re-validation, with
    --any-cost, or when it is within the guard."""
    default = next((b for b in baselines if b.name == DEFAULT_BASELINE and b.state == "COMPLETE"), None)
    if snapshot.revalidation is None or snapshot.config.search.any_cost or default is None:
        return None
    order = ranking.ranked(snapshot.trials, snapshot.directions, snapshot.weights)
    if not order:
        return None
    top = order[0]
    metrics = TrialRecord.of(top).metrics or {}
    over = ranking.over_cost(metrics, default.metrics)
    if not over:
        return None
    metric = snapshot.score.metric
    value, base = metrics.get(metric), default.metrics.get(metric)
    return CostlyBest(trial=top.number, gain=improvement(value, base, snapshot.score.maximize) if value and base else None,
                      over={k: metrics[k] / default.metrics[k] for k in over if default.metrics[k]})


def write_outputs(snapshot: StudySnapshot, mlflow: dict[str, Any] | None = None) -> TuneResult:
    """Write ``summary.json``, ``comparison.md`` and ``OPTIONS.ini`` under the study's --out; the result."""
    summary = summarize(snapshot, mlflow)
    best, found = summary.best, summary.answer
    write_atomic(snapshot.out / "summary.json", summary.to_json() + "\n")
    write_atomic(snapshot.out / "comparison.md", comparison_markdown(summary))
    if found is not None and found.recommend == "reference" and best is not None:  # nothing beat the reference
        ref = next(b for b in snapshot.baselines if b.name == found.name)
        ran = {p.name: ref.flags[p.flag] for p in snapshot.space.parameters if p.flag in ref.flags}
        _write_options(snapshot, _kept_options(snapshot, ref, best), ran, "OPTIONS.ini")
    elif best is not None:
        _write_options(snapshot, (Path(best.log_dir) / "OPTIONS").read_text(), best.params, "OPTIONS.ini")
    reval = summary.revalidation
    if reval is not None and reval.minimal:  # the options that matter, the rest at the reference's: measured
        measured = snapshot.out / "revalidation-minimal" / "minimal" / "round-0" / "OPTIONS"
        _write_options(snapshot, measured.read_text(), reval.minimal.params, "OPTIONS.minimal.ini")
    elif found is not None and found.recommend == "best" and best is not None and (
            reval is None or reval.reference and not reval.ablation):  # no ablation ran: what it changed, unmeasured
        _write_changed(snapshot, best, reval.reference if reval is not None and reval.reference else DEFAULT_BASELINE)
    trials = [_trial_row(t) for t in snapshot.trials if TrialRecord.of(t).outcome != "rejected"]
    return TuneResult(study_name=snapshot.name, out=snapshot.out, best_params=best.params if best else {},
                      best_metrics=best.metrics if best else {}, baselines=list(summary.baselines),
                      trials=trials, summary=summary, answer=answer_of(summary))
