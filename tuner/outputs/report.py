"""A finished study's outputs: ``summary.json``, ``OPTIONS.ini`` and the closing comparison table."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from optuna.trial import FrozenTrial

from tuner import options_file, ranking
from tuner.fmt import fmt_ops
from tuner.model import DEFAULT_BASELINE, StudySnapshot, TuneResult
from tuner.outputs.explain import explain


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _trial_row(t: FrozenTrial) -> dict[str, Any]:
    row: dict[str, Any] = {"number": t.number, "outcome": t.user_attrs.get("outcome", t.state.name.lower()),
                           "params": t.params}
    if "metrics" in t.user_attrs:
        row["metrics"] = t.user_attrs["metrics"]
    if "fail_reason" in t.user_attrs:
        row["reason"] = t.user_attrs["fail_reason"]
    return row


def comparison(baselines: list[dict[str, Any]], best: dict[str, Any] | None,
               revalidation: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Rows for default vs hand-found vs best, with ops/s relative to the RocksDB-default baseline:
    the re-validated medians (with their spread) when there was a re-validation, else single runs."""
    if revalidation and revalidation.get("best"):
        measured = {r["name"]: r for r in revalidation["configurations"] if r.get("median_ops_per_sec")}
        names = [b["name"] for b in baselines if b["name"] in measured] + [revalidation["best"]]
        rows = [{"name": n if measured[n]["trial"] is None else f"best (trial {measured[n]['trial']})",
                 "ops_per_sec": measured[n]["median_ops_per_sec"], "p99_us": measured[n]["median_p99_us"],
                 "write_amp": measured[n]["median_write_amp"], "spread": measured[n]["spread"]} for n in names]
    else:
        rows = [{"name": b["name"], **{k: b.get("metrics", {}).get(k) for k in ("ops_per_sec", "p99_us", "write_amp")}}
                for b in baselines]
        if best is not None:
            rows.append({"name": f"best (trial {best['trial']})",
                         **{k: best["metrics"].get(k) for k in ("ops_per_sec", "p99_us", "write_amp")}})
    default = next((r["ops_per_sec"] for r in rows if r["name"] == DEFAULT_BASELINE), None)
    for row in rows:
        row["vs_default"] = row["ops_per_sec"] / default if default and row["ops_per_sec"] else None
    return rows


def _cells(row: dict[str, Any]) -> tuple[str, str, str, str, str]:
    """ops/s, its spread, P99, write amp and ratio to the default of a comparison row, as printed."""
    p99 = "-" if row["p99_us"] is None else f"{row['p99_us']:.2f}"
    wa = "-" if row["write_amp"] is None else f"{row['write_amp']:.3f}"
    ratio = "-" if row["vs_default"] is None else f"{row['vs_default']:.2f}x"
    s = row.get("spread")
    spread = f"{fmt_ops(s['min'])}-{fmt_ops(s['max'])}" if s else "1 run"
    return fmt_ops(row["ops_per_sec"]), spread, p99, wa, ratio


def interval_line(summary: dict[str, Any]) -> str | None:
    """"best vs rocksdb-default: 1.53x (95 % CI ...)" after a re-validation, else None."""
    reval = summary.get("revalidation") or {}
    if "best_vs_default" not in reval:
        return None
    ratio, (low, high) = reval["best_vs_default"]["ratio"], reval["best_vs_default"]["ci95"]
    return (f"best vs rocksdb-default: {ratio:.2f}x (95 % bootstrap CI {low:.2f}-{high:.2f}x over "
            f"{reval['rounds']} interleaved rounds; noise: rocksdb-default's CV {100 * reval['noise_cv_default']:.1f} %)")


def _why(summary: dict[str, Any]) -> list[str]:
    """The explanation lines: each tuned option of the best against the default, by importance."""
    explanation = summary.get("explanation")
    if not explanation or not explanation["options"]:
        return []
    head = "why, option by option (vs the values rocksdb-default ran with; trends are correlations across trials):"
    return ["", head] + [f"  {row['text']}" for row in explanation["options"]]


def closing_table(summary: dict[str, Any]) -> str:
    header = (f"{'configuration':<28} {'ops/s':>12} {'range':>19} {'P99 us':>10} {'write amp':>10} "
              f"{'vs default':>11}")
    lines = [header, "-" * len(header)]
    for row in summary["comparison"]:
        ops, spread, p99, wa, ratio = _cells(row)
        lines.append(f"{row['name']:<28} {ops:>12} {spread:>19} {p99:>10} {wa:>10} {ratio:>11}")
    if interval_line(summary):
        lines += ["", interval_line(summary)]
    best = summary.get("best")
    if best:
        lines.append("")
        lines.append("best configuration (db_bench flags): " + " ".join(f"--{k}={v}" for k, v in best["flags"].items()))
        if not best["feasible"]:
            lines.append("NOTE: no trial met the budgets; this is the least-violating one.")
        lines += _why(summary)
    else:
        lines.append("")
        lines.append("no trial completed: see the failures in summary.json")
    return "\n".join(lines)


def comparison_markdown(summary: dict[str, Any]) -> str:
    """The comparison as a Markdown table (``comparison.md``): defaults vs hand-found vs best."""
    lines = [f"# {summary['study']}: {summary['workload']} (scale {summary['scale']:g}), "
             f"db_bench {summary['db_bench']['version']} ({summary['db_bench']['build']})", "",
             "| configuration | ops/s | range | P99 us | write amp | vs rocksdb-default |", "|---|---:|---:|---:|---:|---:|"]
    for row in summary["comparison"]:
        lines.append("| " + " | ".join((row["name"], *_cells(row))) + " |")
    best = summary.get("best")
    if best:
        lines += ["", "Best configuration (db_bench flags): `" +
                  " ".join(f"--{k}={v}" for k, v in best["flags"].items()) + "`"]
    lines += [line.replace("  ", "- ", 1) if line.startswith("  ") else line for line in _why(summary)]
    if interval_line(summary):
        lines += ["", interval_line(summary) + "."]
        lines += ["", "ops/s, P99 and write amp are medians of the re-validation rounds, measured interleaved on the "
                  "same machine in the same study."]
    else:
        lines += ["", "Each row is a single measurement on the same machine in the same study (no --revalidate)."]
    return "\n".join(lines) + "\n"


def _best(snapshot: StudySnapshot) -> dict[str, Any] | None:
    best_trial = snapshot.best()
    if best_trial is None:
        return None
    best = {
        "trial": best_trial.number,
        "params": best_trial.params,
        "flags": snapshot.space.flags(best_trial.params),
        "metrics": best_trial.user_attrs["metrics"],
        "feasible": ranking.feasible(best_trial),
        "log_dir": best_trial.user_attrs.get("log_dir"),
    }
    if "options_mismatch" in best_trial.user_attrs:
        best["options_mismatch"] = best_trial.user_attrs["options_mismatch"]
    return best


def summarize(snapshot: StudySnapshot, mlflow: dict[str, Any] | None = None) -> dict[str, Any]:
    """The content of ``summary.json``; ``mlflow`` says where the study is tracked."""
    groups = snapshot.by_outcome()
    best = _best(snapshot)
    baselines = [
        {"name": b["name"], "params": b["flags"], "doc": b.get("doc", ""), "state": b["state"],
         "metrics": b.get("metrics", {}), **({"reason": b["reason"]} if "reason" in b else {})}
        for b in snapshot.baselines
    ]
    host = snapshot.space.context
    assert host is not None
    summary: dict[str, Any] = {
        "study": snapshot.name,
        "workload": snapshot.workload.name,
        "space": snapshot.space.name,
        "sampler": snapshot.config.sampler,
        "objective": snapshot.score.objective,
        "objective_description": snapshot.score.describe(),
        "seed": snapshot.config.seed,
        "db_bench_seed": snapshot.db_bench_seed,
        "scale": snapshot.config.scale,
        "data_bytes": snapshot.workload.data_bytes(),
        "db_bench": snapshot.db_bench.to_dict(),
        "host": {"cores": host.cores, "ram_bytes": host.ram, "memory_budget_bytes": host.budget},
        "storage": snapshot.storage,
        "trials": {k: len(v) for k, v in groups.items()},
        "best": best,
        "baselines": baselines,
        "repeats": snapshot.config.repeats,
        "revalidation": snapshot.revalidation,
        "comparison": comparison(baselines, best, snapshot.revalidation),
        "explanation": explain(snapshot, best) if best else None,
        "mlflow": mlflow,
        "failures": [{"trial": t.number, "reason": t.user_attrs.get("fail_reason", "")} for t in groups["failed"]][:50],
    }
    if len(snapshot.directions) > 1:
        summary["pareto"] = [_trial_row(t) for t in snapshot.pareto_front()]
    return summary


def write_outputs(snapshot: StudySnapshot, mlflow: dict[str, Any] | None = None) -> TuneResult:
    """Write ``summary.json``, ``comparison.md`` and ``OPTIONS.ini`` under the study's --out; the result."""
    summary = summarize(snapshot, mlflow)
    best = summary["best"]
    write_atomic(snapshot.out / "summary.json", json.dumps(summary, indent=2, default=str) + "\n")
    write_atomic(snapshot.out / "comparison.md", comparison_markdown(summary))
    if best is not None:
        text = (Path(best["log_dir"]) / "OPTIONS").read_text()
        cache = next((best["params"][p.name] for p in snapshot.space.parameters
                      if p.options_key == options_file.BLOCK_CACHE_KEY and p.name in best["params"]), None)
        write_atomic(snapshot.out / "OPTIONS.ini", options_file.with_block_cache(text, cache))
    trials = [_trial_row(t) for t in snapshot.trials if t.user_attrs.get("outcome") != "rejected"]
    return TuneResult(study_name=snapshot.name, out=snapshot.out, best_params=best["params"] if best else {},
                      best_metrics=best["metrics"] if best else {}, baselines=summary["baselines"], trials=trials,
                      summary=summary)
