"""What a study's answer is for: the target it tuned for, what its trials scaled, and the answer
itself: the best configuration when it beat the reference at the target, else "keep your
configuration" (and then ``OPTIONS.ini`` is the reference's own)."""

from __future__ import annotations

from typing import Any

from tuner.fmt import fmt_bytes, fmt_duration
from tuner.model import DEFAULT_BASELINE, Answer
from tuner.stats import improvement


def answer(summary: dict[str, Any]) -> dict[str, Any] | None:
    """``{"recommend": "best" | "reference", "name": ..., "why": ...}`` after a re-validation, else None."""
    reval = summary.get("revalidation") or {}
    if not reval.get("best") or not summary.get("best"):
        return None
    gain, ref = reval["best_vs_reference"], reval["reference"]
    where = "at the target" if summary.get("target") and not summary["target"]["assumed"] else "in the re-validation"
    failed = {r["name"]: r["failed"] for r in reval.get("configurations", []) if "failed" in r}
    if ref in failed and reval["best"] not in failed:
        return {"recommend": "best", "name": reval["best"],
                "why": f"{ref} failed {where} ({failed[ref]}) and {reval['best']} ran"}
    if gain["verdict"] == "faster":
        return {"recommend": "best", "name": reval["best"],
                "why": f"{reval['best']} beat {ref} {where} ({gain['ratio']:.2f}x, its 95 % interval above 1)"}
    worse = "slower" if summary.get("objective_metric", "ops_per_sec") == "ops_per_sec" else \
        f"worse {summary['objective_metric']}"
    how = "no measurable difference" if gain["verdict"] == "tie" else worse if gain["verdict"] == "slower" \
        else "not measured"
    return {"recommend": "reference", "name": ref,
            "why": f"the best tuned configuration ({reval['best']}) against {ref} {where}: {how}; keep "
                   f"{'your configuration' if ref != DEFAULT_BASELINE else 'the defaults'}"}


def answer_of(summary: dict[str, Any]) -> Answer | None:
    """The answer as the study's observers are told it: the re-validation's (:func:`answer`) with its
    gain, else the best trial; None when no trial completed."""
    found, best = summary.get("answer"), summary.get("best")
    if found is None:
        return Answer(trial=best["trial"], kept=None, why="the search's best trial (single runs, not re-validated)") \
            if best else None
    reval = summary["revalidation"]
    gain = reval["best_vs_reference"]
    use = found["recommend"] == "best"
    return Answer(trial=reval["best_trial"] if use else None, kept=None if use else found["name"], why=found["why"],
                  best=reval["best"], reference=reval["reference"], ratio=gain.get("ratio"),
                  ci95=tuple(gain["ci95"]) if gain.get("ci95") else None, p_value=gain.get("p_value"),
                  verdict=gain.get("verdict"), rounds=gain.get("n"))


def search_gain(summary: dict[str, Any]) -> float | None:
    """How many times better the best trial's single run is than rocksdb-default's single run, as the
    search saw them, in the study's metric (tuner.stats.improvement)."""
    metric = summary.get("objective_metric", "ops_per_sec")
    best = (summary.get("best") or {}).get("metrics", {}).get(metric)
    default = next((b["metrics"].get(metric) for b in summary.get("baselines", [])
                    if b["name"] == DEFAULT_BASELINE and b.get("metrics")), None)
    return improvement(best, default, summary.get("objective_maximize", True)) if best and default else None


def _shorter_search(target: dict[str, Any]) -> bool:
    """Whether the search ran shorter timed phases than the re-validation (--search-duration); a
    summary from before it was recorded had one length."""
    confirm = target.get("confirm_duration_seconds")
    return bool(confirm) and confirm != target.get("duration_seconds")


def target_lines(summary: dict[str, Any]) -> list[str]:
    """What the study tuned for, how its trials relate to it, and what was scaled."""
    t = summary.get("target")
    if not t:
        return []
    shape = t["shape"]
    levels = "dynamic level sizes (L1 at most" if shape.get("level_compaction_dynamic_level_bytes") else "L1"
    lsm = (f"{fmt_bytes(shape['target_file_size_base'])} files, {levels} {fmt_bytes(shape['max_bytes_for_level_base'])}"
           f"{')' if levels != 'L1' else ''} x{shape['max_bytes_for_level_multiplier']}, L0 compaction at "
           f"{shape['level0_file_num_compaction_trigger']} files")
    memory = fmt_bytes(t["memory_bytes"]) + " of memory (page cache included)" if t["memory_bytes"] else \
        "no memory limit given"
    if t["assumed"]:
        lines = [f"target: none given (--target-data, --target-memory, --base-options): assumed the workload's own "
                 f"{fmt_bytes(t['data_bytes'])} of data, {memory}"]
    else:
        lines = [f"target: {fmt_bytes(t['data_bytes'])} of data (raw keys and values), {memory}; {t['source']}: "
                 f"{lsm}; {t['levels']} level(s) below L0"]
    trials = f"trials: {fmt_bytes(t['trial_data_bytes'])} of data ({t['trial_levels']} level(s) below L0)"
    if t.get("trial_memory_bytes"):
        trials += f" within {fmt_bytes(t['trial_memory_bytes'])}"
    if t["kind"] == "preloaded":
        pre = (summary.get("preload") or {}).get("trials", {})
        trials += (f", each on a hard-linked checkpoint of a DB preloaded once ({fmt_bytes(pre.get('size_bytes'))} on "
                   f"disk, built in {fmt_duration(pre.get('seconds', 0.0))})")
        if t.get("duration_seconds"):
            trials += f", {t['duration_seconds']:g} s per timed phase, then the flush and compactions it owes"
            if _shorter_search(t):
                trials += (f"; the re-validation confirms the answer in {t['confirm_duration_seconds']:g} s phases "
                           "(--duration; the search's shorter ones, --search-duration, try more configurations)")
    else:
        trials += ", each loading its DB from empty (a load workload)"
    lines.append(trials)
    label = "RocksDB's default" if t["assumed"] else "the target's"
    for why in dict.fromkeys(s["why"] for s in t["scaled"]):
        lines.append("scaled: " + "; ".join(f"{s['option']} {_value(s['trial'])} ({label}: {_value(s['target'])})"
                                            for s in t["scaled"] if s["why"] == why) + f": {why}")
    if any(s["option"] not in ("data", "memory") for s in t["scaled"]):
        lines.append(f"the answer may not hold at {label.replace(' default', '')} file and level sizes (docs/scale.md)"
                     + ("; give --target-data for the DB you deploy" if t["assumed"] else ""))
    if not t["scaled"] and not t["assumed"]:
        lines.append("scaled: nothing (the trials keep the target's size, shape and memory)")
    return lines


def gain_lines(summary: dict[str, Any]) -> list[str]:
    """The gain over the defaults as the search saw it (single runs at the tuning size) beside the
    gain confirmed in paired rounds (at the target, when one was given), and the answer."""
    out = []
    found = search_gain(summary)
    reval = summary.get("revalidation") or {}
    confirmed = reval.get("best_vs_reference") if reval.get("reference") == DEFAULT_BASELINE else \
        (reval.get("vs") or {}).get(DEFAULT_BASELINE)
    t = summary.get("target") or {}
    if found is not None and confirmed and confirmed.get("ratio"):
        where = f"at the target ({fmt_bytes(t['confirmed_at_bytes'])})" if t and not t.get("assumed") else "re-validated"
        ci = f", 95 % CI {confirmed['ci95'][0]:.2f}-{confirmed['ci95'][1]:.2f}" if confirmed.get("ci95") else ""
        phases = f", {t['duration_seconds']:g} s phases" if _shorter_search(t) else ""
        metric = summary.get("objective_metric", "ops_per_sec")
        named = "" if metric == "ops_per_sec" else f" in {metric}"
        out.append(f"gain{named} over rocksdb-default: {found:.2f}x in the search (single runs at "
                   f"{fmt_bytes(t.get('trial_data_bytes'))}{phases}, the runs that chose it) | {confirmed['ratio']:.2f}x {where} "
                   f"({confirmed['n']} paired rounds that chose nothing{ci})")
    a = summary.get("answer")
    if a:
        out.append(f"answer: {'use ' + a['name'] if a['recommend'] == 'best' else 'keep ' + a['name']}: {a['why']}"
                   + ("" if a["recommend"] == "best" else f"; OPTIONS.ini is {a['name']}'s"))
    return out


def _value(v: Any) -> str:
    return fmt_bytes(v) if isinstance(v, int) and not isinstance(v, bool) and v >= 2**16 else str(v)
