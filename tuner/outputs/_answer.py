"""What a study's answer is for: the target it tuned for, what its trials scaled, and the answer
itself: the best configuration when it beat the reference at the target, else "keep your
configuration" (and then ``OPTIONS.ini`` is the reference's own)."""

from __future__ import annotations

from typing import Any

from objectives.scores import HELD, Bound
from tuner import ranking
from tuner.backends import BACKENDS
from tuner.fmt import AT_RATE_METRICS, fmt_at_rate, fmt_bytes, fmt_cost, fmt_duration, fmt_resolution, fmt_value
from tuner.model import DEFAULT_BASELINE, Answer
from tuner.stats import MOST_ROUNDS, improvement, tie_resolution
from tuner.summary import CapacityOf, CapacityProbe, CapacityReport, Measured, Ratio, StudyAnswer, Summary, TargetInfo


def answer(summary: Summary) -> StudyAnswer | None:
    """Use the best, or keep the reference (and why), after a re-validation, or after the capacity stage of a study
    that scores capacity without one (:func:`capacity_answer`); else None."""
    reval = summary.revalidation
    if reval is None and summary.best:
        return capacity_answer(summary)
    if reval is None or not summary.best:
        return None
    if not reval.best and reval.kept_out and str(reval.reference) not in summary.breaks:
        ref = str(reval.reference)
        return StudyAnswer(recommend="reference", name=ref,
                           why=f"every trial's search run cost more than {DEFAULT_BASELINE}'s beyond the cost guard "
                               f"({ranking.margin_words()}): keep {_yours(ref)} (--any-cost lets the re-validation "
                               "choose among them)")
    if not reval.best:
        return None
    gain, ref, best = reval.best_vs_reference or Ratio(), str(reval.reference), reval.best
    where = "at the target" if summary.target and not summary.target.assumed else "in the re-validation"
    failed = {c.name: c.failed for c in reval.configurations if c.failed is not None}
    if ref in failed and best not in failed:
        return StudyAnswer(recommend="best", name=best, why=f"{ref} failed {where} ({failed[ref]}) and {best} ran")
    if ref in summary.breaks and best not in failed:
        ran = f"{gain.ratio:.2f}x {ref} {where}" if gain.ratio is not None else f"not measured beside {ref}"
        return StudyAnswer(recommend="best", name=best,
                           why=f"{ref} breaks your constraint {'; '.join(summary.breaks[ref])}: not an option; {best} "
                               f"is the best within it ({ran})")
    if broken := out_of_bounds(summary, best):
        also = out_of_bounds(summary, ref)
        return StudyAnswer(recommend="reference", name=ref,
                           why=f"{best}'s medians {where} break your bound {'; '.join(broken)}"
                               + (f", and {ref}'s too ({'; '.join(also)}): none measured there keeps it" if also else
                                  "")
                               + f"; keep {_yours(ref)}")
    if gain.verdict == "faster":
        if unconfirmed := capacity_unconfirmed(summary, best):
            return StudyAnswer(recommend="reference", name=ref,
                               why=f"{best} beat {ref} {where} ({gain.ratio:.2f}x, its 95 % interval above 1) but the "
                                   f"capacity stage, more paired rounds of the same measure, found {unconfirmed}; "
                                   f"keep {_yours(ref)}")
        over = beyond_guard(summary, best) if summary.cost_guard else []
        if over:
            return StudyAnswer(recommend="reference", name=ref,
                               why=f"{best} beat {ref} {where} ({gain.ratio:.2f}x, its 95 % interval above 1) but costs "
                                   f"more than the cost guard allows: {'; '.join(over)}; keep {_yours(ref)} "
                                   f"(--any-cost answers {best})")
        return StudyAnswer(recommend="best", name=best,
                           why=f"{best} beat {ref} {where} ({gain.ratio:.2f}x, its 95 % interval above 1)")
    metric = summary.objective_metric
    worse = "slower" if metric == "ops_per_sec" else f"worse {metric}"
    how = "no measurable difference" if gain.verdict == "tie" else worse if gain.verdict == "slower" \
        else "not measured"
    return StudyAnswer(recommend="reference", name=ref,
                       why=f"the best tuned configuration ({best}) against {ref} {where}: {how}; keep {_yours(ref)}")


def beyond_guard(summary: Summary, best: str) -> list[str]:
    """What ``best`` costs beyond the cost guard beside rocksdb-default, in words: each ranking.COST_MARGINS
    metric whose median over the re-validation's rounds exceeds the defaults' beyond its margin, and each
    ranking.SERVED_MARGINS metric whose median at --serve-rate does (the P99.99, the stalls), and with --slo a capacity
    at it below the defaults' (the paired ratio's 95 % interval under 1: a tie or a bracket of single runs is not);
    empty when within."""
    ran, default = _rows(summary, best)
    over = []
    if ran is not None and default is not None:
        over = [f"{_COST_NAMES[key]} {fmt_cost(key, ran.median(key) or 0.0)} against "
                f"{fmt_cost(key, default.median(key) or 0.0)} in its rounds" for key in ranking.rows_over_cost(ran, default)]
    served = summary.served
    if served is not None and best in served.names:
        over += [f"served at {served.rate:,.0f} writes/s, {words}"
                 for words in ranking.served_beyond_words(served, best, DEFAULT_BASELINE)]
    cap, paired = _capacity_vs_default(summary, best)
    if cap is not None and paired is not None and paired.verdict == "slower":
        over.append(f"capacity at {cap.slo} {ratio_text(paired)} the defaults'")
    return over


def _capacity_vs_default(summary: Summary, name: str) -> tuple[CapacityReport | None, Ratio | None]:
    """The --slo capacity stage and ``name``'s capacity over the defaults' in its paired rounds (None below 2)."""
    cap = summary.capacity
    return cap, cap.vs_default.get(name) if cap is not None else None


def capacity_unconfirmed(summary: Summary, best: str) -> str | None:
    """In a study that scores capacity (--objective capacity) against rocksdb-default, the --slo capacity stage's
    paired ratio for ``best`` in words when its rounds (2 or more) do not find it above the defaults: that stage
    searches the same capacity at the same bound, to a finer step, in rounds of its own, so a gain it cannot see
    is not one to deploy (guard or no guard: it is the objective, not a cost); None when they do or did not run."""
    cap, paired = _capacity_vs_default(summary, best)
    if summary.objective_metric != HELD or summary.revalidation is None or \
            summary.revalidation.reference != DEFAULT_BASELINE or cap is None or paired is None:
        return None
    return None if paired.verdict == "faster" else f"{ratio_text(paired)} the defaults' capacity at {cap.slo}"


def capacity_answer(summary: Summary) -> StudyAnswer | None:
    """A study that scores capacity (--objective capacity) with no re-validation (--revalidate 0): its --slo capacity
    stage measured the best and rocksdb-default in paired rounds that chose nothing, the confirmation a re-validation
    would give: use the best when their ratio's 95 % interval lies above 1 and its search run at its held rate cost
    no more than the defaults' at theirs beyond the cost guard (ranking.COST_MARGINS; --any-cost lifts it), else keep
    the defaults, saying why; the defaults too when the best is their own start. None for any other study, or one
    round (a bracket, no interval)."""
    cap, best = summary.capacity, summary.best
    if summary.objective_metric != HELD or cap is None or best is None:
        return None
    name = f"trial {best.trial}"
    if cap.of(name) is None and cap.of(DEFAULT_BASELINE) is not None:  # the best is the defaults' start, measured once
        return StudyAnswer(recommend="reference", name=DEFAULT_BASELINE,
                           why=f"the search's best, {name}, is {DEFAULT_BASELINE}'s own start: keep the defaults")
    paired = cap.vs_default.get(name)
    if paired is None:
        return None
    stage = f"the capacity stage's {paired.n} paired rounds, which chose nothing"
    default = summary.baseline(DEFAULT_BASELINE)
    over = ranking.over_cost(best.metrics, default.metrics) if summary.cost_guard and default is not None else []
    if paired.verdict == "faster" and over:
        costs = ", ".join(_COST_NAMES.get(k, k) for k in over)
        return StudyAnswer(recommend="reference", name=DEFAULT_BASELINE,
                           why=f"{name} held more of a rate than {DEFAULT_BASELINE} at {cap.slo} in {stage} "
                               f"({ratio_text(paired)}) but its search run at its held rate cost more than "
                               f"{DEFAULT_BASELINE}'s at theirs beyond the cost guard: {costs}; keep the defaults "
                               f"(--any-cost answers {name})")
    if paired.verdict == "faster":
        return StudyAnswer(recommend="best", name=name,
                           why=f"{name} held more of a rate than {DEFAULT_BASELINE} at {cap.slo} in {stage} "
                               f"({ratio_text(paired)}, its 95 % interval above 1)")
    how = "no measurable difference" if paired.verdict == "tie" else "it held less"
    return StudyAnswer(recommend="reference", name=DEFAULT_BASELINE,
                       why=f"{name}'s capacity at {cap.slo} against {DEFAULT_BASELINE}'s in {stage}: {how} "
                           f"({ratio_text(paired)}); keep the defaults")


def out_of_bounds(summary: Summary, name: str) -> list[str]:
    """The user's bounds on metrics (--constraint, --max-p99-us, --max-write-amp) that ``name``'s medians over the
    re-validation's rounds break, in words: ``p99.9_us <= 10000 (--constraint): 12,345 in its rounds``."""
    reval = summary.revalidation
    row = next((c for c in reval.configurations if c.name == name and c.failed is None), None) if reval else None
    bounds = [Bound(b.metric, b.limit, b.upper, b.flag) for b in summary.budgets]
    return [f"{b.describe()} ({b.flag}): {fmt_value(v)}" for b, v in ranking.rows_out_of_bounds(row, bounds)] \
        if row is not None else []


def _rows(summary: Summary, name: str) -> tuple[Measured | None, Measured | None]:
    """``name``'s and rocksdb-default's rows in the re-validation's rounds; None for one that failed or did not run."""
    reval = summary.revalidation
    measured = {c.name: c for c in reval.configurations if c.failed is None} if reval is not None else {}
    return measured.get(name), measured.get(DEFAULT_BASELINE)


def _yours(ref: str) -> str:
    return "your configuration" if ref != DEFAULT_BASELINE else "the defaults"


def answer_of(summary: Summary) -> Answer | None:
    """The answer as the study's observers are told it: the re-validation's (:func:`answer`) with its
    gain, else the best trial; None when no trial completed."""
    found, best, reval = summary.answer, summary.best, summary.revalidation
    if found is None or best is None:
        return Answer(trial=best.trial, kept=None, why="the search's best trial (single runs, not re-validated)") \
            if best else None
    use = found.recommend == "best"
    if reval is None:  # the capacity stage's answer (capacity_answer): the best's capacity over the defaults'
        gain = _capacity_vs_default(summary, f"trial {best.trial}")[1] or Ratio()
        return Answer(trial=best.trial if use else None, kept=None if use else found.name, why=found.why,
                      best=f"trial {best.trial}", reference=DEFAULT_BASELINE, ratio=gain.ratio,
                      ci95=(gain.ci95[0], gain.ci95[1]) if gain.ci95 else None, p_value=gain.p_value,
                      verdict=gain.verdict, rounds=gain.n)
    gain = reval.best_vs_reference or Ratio()
    return Answer(trial=reval.best_trial if use else None, kept=None if use else found.name, why=found.why,
                  best=reval.best, reference=reval.reference, ratio=gain.ratio,
                  ci95=(gain.ci95[0], gain.ci95[1]) if gain.ci95 else None, p_value=gain.p_value,
                  verdict=gain.verdict, rounds=gain.n)


def search_gain(summary: Summary) -> float | None:
    """How many times better the best trial's single run is than rocksdb-default's single run, as the
    search saw them, in the study's metric (tuner.stats.improvement)."""
    metric = summary.objective_metric
    best = summary.best.metrics.get(metric) if summary.best else None
    default_run = summary.baseline(DEFAULT_BASELINE)
    default = default_run.metrics.get(metric) if default_run else None
    return improvement(best, default, summary.objective_maximize) if best and default else None


def side_by_side(summary: Summary) -> str | None:
    """How the search's single runs ran when its trials ran beside one another (--parallel), and whether
    rocksdb-default's, which they are compared with, ran so too; None when they ran one at a time."""
    trials = summary.slot.neighbours if summary.slot else 0
    if not trials:
        return None
    default = summary.baseline(DEFAULT_BASELINE)
    ran = (default.neighbours or 0) if default else trials
    if ran == trials:
        return f"each beside {trials} other run(s) at once (--parallel), rocksdb-default's as the trials'"
    return (f"the trials beside {trials} other run(s) at once (--parallel), rocksdb-default's beside {ran}: not like "
            "with like; the re-validation (--revalidate K) compares runs made one at a time")


def _shorter_search(target: TargetInfo | None) -> bool:
    """Whether the search ran shorter timed phases than the re-validation (--search-duration); a
    summary from before it was recorded had one length."""
    if target is None:
        return False
    confirm = target.confirm_duration_seconds
    return bool(confirm) and confirm != target.duration_seconds


def runs_workloads(summary: Summary) -> bool:
    """Whether the summary's backend runs db_bench's workloads, as it declares (Backend.workloads): its
    figures and sizes are then db_bench's, else a program's."""
    backend = BACKENDS.get(summary.backend)
    return backend is not None and backend.workloads


def _program_lines(summary: Summary, t: TargetInfo) -> list[str]:
    """What a program's study tuned for (its data and memory) and how its runs ran, in its own words."""
    memory = f" within {fmt_bytes(t.trial_memory_bytes)} (a memory cgroup, page cache included)" \
        if t.trial_memory_bytes else ""
    backend = BACKENDS.get(summary.backend)
    rate = backend is not None and backend.needs_rate  # the tuner's driver, not the user's program
    program, data, built, duration = ("RocksDB at the offered rate", "--target-data", "open_loop load", "--duration") \
        if rate else ("your program", "{data_bytes}", "--load", "{duration}")
    lines = [f"target: none given (--target-data, --target-memory): your program at its own size{memory}" if t.assumed
             else f"target: {program} at {fmt_bytes(t.data_bytes)} of data ({data}){memory}"]
    if t.kind == "preloaded":
        pre = summary.preload.trials if summary.preload else None
        runs = (f"runs: each on a hard-linked checkpoint of the DB {built} built once "
                f"({fmt_bytes(pre.size_bytes if pre else None)} on disk, built in {fmt_duration(pre.seconds if pre else 0.0)})")
    else:
        runs = "runs: each on an empty DB (no --load)"
    if t.duration_seconds:
        shorter = _shorter_search(t)
        runs += f", {t.duration_seconds:g} s each ({'--search-duration' if shorter and rate else duration})" \
            + (" and its settle" if rate else "")
        if shorter:
            who = "the re-validation confirms" if summary.revalidation is not None or not summary.capacity else \
                "the capacity searches (--slo) confirm"
            runs += (f"; {who} the answer in {t.confirm_duration_seconds:g} s runs (--duration; the "
                     "search's shorter ones, --search-duration, try more configurations)")
    if rate and summary.offered and summary.offered.background == "low":
        runs += ("; RocksDB's flush and compaction threads at nice 19 (--background-priority low): a host setting "
                 "OPTIONS.ini cannot carry, so a service sees these figures only with its own RocksDB's at the lowest "
                 "CPU priority too (Env::LowerThreadPoolCPUPriority on its LOW and HIGH pools)")
    return [*lines, runs]


def target_lines(summary: Summary) -> list[str]:
    """What the study tuned for, how its trials relate to it, and what was scaled."""
    t = summary.target
    if not t:
        return []
    if not runs_workloads(summary):
        return _program_lines(summary, t)
    shape = t.shape
    levels = "dynamic level sizes (L1 at most" if shape.level_compaction_dynamic_level_bytes else "L1"
    lsm = (f"{fmt_bytes(shape.target_file_size_base)} files, {levels} {fmt_bytes(shape.max_bytes_for_level_base)}"
           f"{')' if levels != 'L1' else ''} x{shape.max_bytes_for_level_multiplier}, L0 compaction at "
           f"{shape.level0_file_num_compaction_trigger} files")
    memory = fmt_bytes(t.memory_bytes) + " of memory (page cache included)" if t.memory_bytes else \
        "no memory limit given"
    if t.assumed:
        lines = [f"target: none given (--target-data, --target-memory, --base-options): assumed the workload's own "
                 f"{fmt_bytes(t.data_bytes)} of data, {memory}"]
    else:
        lines = [f"target: {fmt_bytes(t.data_bytes)} of data (raw keys and values), {memory}; {t.source}: "
                 f"{lsm}; {t.levels} level(s) below L0"]
    trials = f"trials: {fmt_bytes(t.trial_data_bytes)} of data ({t.trial_levels} level(s) below L0)"
    if t.trial_memory_bytes:
        trials += f" within {fmt_bytes(t.trial_memory_bytes)}"
    if t.kind == "preloaded":
        pre = summary.preload.trials if summary.preload else None
        trials += (f", each on a hard-linked checkpoint of a DB preloaded once ({fmt_bytes(pre.size_bytes if pre else None)} "
                   f"on disk, built in {fmt_duration(pre.seconds if pre else 0.0)})")
        if t.duration_seconds:
            trials += f", {t.duration_seconds:g} s per timed phase, then the flush and compactions it owes"
            if _shorter_search(t):
                trials += (f"; the re-validation confirms the answer in {t.confirm_duration_seconds:g} s phases "
                           "(--duration; the search's shorter ones, --search-duration, try more configurations)")
    else:
        trials += ", each loading its DB from empty (a load workload)"
    lines.append(trials)
    label = "RocksDB's default" if t.assumed else "the target's"
    for why in dict.fromkeys(s.why for s in t.scaled):
        lines.append("scaled: " + "; ".join(f"{s.option} {_value(s.trial)} ({label}: {_value(s.target)})"
                                            for s in t.scaled if s.why == why) + f": {why}")
    if any(s.option not in ("data", "memory") for s in t.scaled):
        lines.append(f"the answer may not hold at {label.replace(' default', '')} file and level sizes (docs/scale.md)"
                     + ("; give --target-data for the DB you deploy" if t.assumed else ""))
    if not t.scaled and not t.assumed:
        lines.append("scaled: nothing (the trials keep the target's size, shape and memory)")
    return lines


def gain_lines(summary: Summary) -> list[str]:
    """The gain over the defaults as the search saw it (single runs at the tuning size) beside the
    gain confirmed in paired rounds (at the target, when one was given), and the answer."""
    out = []
    found = search_gain(summary)
    reval = summary.revalidation
    confirmed = None if reval is None else reval.best_vs_reference if reval.reference == DEFAULT_BASELINE else \
        reval.vs.get(DEFAULT_BASELINE)
    t = summary.target
    if found is not None and confirmed and confirmed.ratio:
        where = f"at the target ({fmt_bytes(t.confirmed_at_bytes)})" if t and not t.assumed else "re-validated"
        ci = f", 95 % CI {confirmed.ci95[0]:.2f}-{confirmed.ci95[1]:.2f}" if confirmed.ci95 else ""
        phases = f", {t.duration_seconds:g} s {'phases' if runs_workloads(summary) else 'runs'}" \
            if t and _shorter_search(t) else ""
        size = f" at {fmt_bytes(t.trial_data_bytes)}" if t and t.trial_data_bytes else ""
        metric = summary.objective_metric
        named = "" if metric == "ops_per_sec" else f" in {metric}"
        beside = summary.slot.neighbours if summary.slot else 0
        at_once = f", each beside {beside} other run(s)" if beside else ""
        alone = ", one run at a time" if beside else ""
        out.append(f"gain{named} over rocksdb-default: {found:.2f}x in the search (single runs{size}{phases}{at_once}, "
                   "the runs that chose it) | "
                   f"{confirmed.ratio:.2f}x {where} ({confirmed.n} paired rounds that chose nothing{alone}{ci})")
    a = summary.answer
    if a:
        out.append(f"answer: {'use ' + a.name if a.recommend == 'best' else 'keep ' + a.name}: {a.why}"
                   + ("" if a.recommend == "best" else f"; OPTIONS.ini is {a.name}'s"))
    cost = cost_line(summary)
    if cost:
        out.append(cost)
    costly = summary.costly
    if costly is not None:
        gain = f", {costly.gain:.2f}x rocksdb-default's {summary.objective_metric} in the search" if costly.gain else ""
        what = ", ".join(f"{_COST_NAMES.get(k, k)} {r:.2f}x" for k, r in costly.over.items())
        out.append(f"best at any cost: trial {costly.trial}{gain}, kept from the finalists by the cost guard: {what} "
                   "the defaults' in its search run (--any-cost lets the re-validation choose it)")
    held = capacity_line(summary)
    if held:
        out.append(held)
    served = served_line(summary)
    if served:
        out.append(served)
    return out


def ratio_text(r: Ratio | None) -> str:
    """``1.42x (95 % CI 1.35-1.49, p = 0.0004, 6 paired rounds)``."""
    if not r or r.ratio is None:
        return "not measured"
    if not r.ci95:
        return f"{r.ratio:.2f}x ({r.n} round: no interval)"
    low, high = r.ci95
    return f"{r.ratio:.2f}x (95 % CI {low:.2f}-{high:.2f}, p = {r.p_value:.2g}, {r.n} paired rounds)"


def _held(c: CapacityOf) -> str:
    tried = sorted(p.offered for p in c.probes)
    if len(c.held_by_round) > 1:
        rounds = ", ".join("none" if h is None else f"{h:,.0f}" for h in c.held_by_round)
        return (f"holds it up to {c.held:,.0f} ops/s, the median of its rounds' ({rounds})" if c.held is not None
                else f"held it at no rate tried in some rounds (by round: {rounds})")
    if c.held is None:
        return f"held it at no rate tried (the lowest, {tried[0]:,.0f} ops/s, did not)" if tried else "was not measured"
    return f"holds it up to {c.held:,.0f} ops/s" + (f" ({c.failed:,.0f} did not)" if c.failed is not None
                                                   else " (every rate tried)")


def _again(cap: CapacityReport) -> str:
    """The rates a search missed far below what its configuration held in an earlier round and ran again, and
    how many held the second time ("" when none: a rate runs again only then)."""
    again = [probes[1].held for c in cap.configurations
             for probes in _by_rate(c.probes).values() if len(probes) == 2]
    return (f"; {len(again)} {'rate' if len(again) == 1 else 'rates'} missed far below what the configuration held "
            f"in an earlier round ran again, {sum(again)} held then") if again else ""


def _by_rate(probes: list[CapacityProbe]) -> dict[tuple[int, float], list[CapacityProbe]]:
    """A configuration's capacity runs by round and offered rate, in the order run."""
    out: dict[tuple[int, float], list[CapacityProbe]] = {}
    for p in probes:
        out.setdefault((p.round, p.offered), []).append(p)
    return out


def capacity_line(summary: Summary) -> str | None:
    """--slo: how far rocksdb-default and the best hold the SLO, in one line: how long each run was and
    where the searches started, the ratio of their capacities when both have one, and for a ratio over rounds that
    is a tie what those rounds could tell (tuner.stats.resolution, as for the gain). None without --slo."""
    cap = summary.capacity
    if cap is None or not cap.configurations:
        return None
    parts = [f"{c.name} {_held(c)}" for c in cap.configurations]
    default = cap.of(DEFAULT_BASELINE)
    others = [c for c in cap.configurations if c.name != DEFAULT_BASELINE]
    ratio = ""
    if others and others[0].name in cap.vs_default:
        paired = cap.vs_default[others[0].name]
        tie = resolution_words(paired, "--capacity-rounds")
        ratio = f": {ratio_text(paired)} the defaults' capacity, paired by round{'; ' + tie if tie else ''}"
    elif default is not None and default.held and others and others[0].held:
        ratio = f": {others[0].held / default.held:.2f}x the defaults' capacity"
    seconds = cap.duration or (summary.target.confirm_duration_seconds if summary.target is not None else None)
    run = f"one {seconds:g} s run" if seconds else "one run"
    start = f", {'the first round ' if cap.rounds > 1 else ''}from {cap.start:,.0f} ops/s ({cap.how})" \
        if cap.start else ""  # records from before it was kept say none
    how = (f"{cap.rounds} paired rounds, in each a search over offered rates, {run} per rate, each run and its "
           f"settle{start}{_again(cap)}" if cap.rounds > 1 else
           f"{run} per offered rate, each run and its settle{start}; a bracket, not an interval")
    return (f"capacity at {cap.slo} ({how}): " + "; ".join(parts) + ratio
            + ". A tail over runs this short moves from run to run and flatters a DB that serves for longer "
              "(docs/measure.md, 'How long a run at a rate must be')")


def resolution_words(paired: Ratio, flag: str, hint: str = "") -> str | None:
    """For a ratio over paired rounds that is a tie (a gain's, a capacity's), what its rounds could tell and how
    many would tell its estimate from 1, as ``flag`` asks for them (``hint`` after): ``resolution: ...``; None
    for any other verdict."""
    can = tie_resolution(paired.verdict, paired.ratio, paired.ci95, paired.n)
    if can is None or paired.ratio is None:
        return None
    text = fmt_resolution(f"{paired.n} paired rounds", "rounds", paired.ratio, can.smallest, can.rounds_needed,
                          MOST_ROUNDS)
    return f"resolution: {text}" + (f" ({flag} {can.rounds_needed}{hint})" if can.rounds_needed else "")


def served_line(summary: Summary) -> str | None:
    """--serve-rate: what a service at that rate saw of rocksdb-default and the answer (medians of their
    runs), and the answer's P99.9 and P99.99 over the defaults', paired by round. None without --serve-rate."""
    served = summary.served
    if served is None or not served.runs:
        return None

    def of(name: str) -> str:
        runs = [r for r in served.runs if r.name == name]
        failed = [r for r in runs if r.failed is not None]
        medians = {key: served.median(name, key) for key in AT_RATE_METRICS}
        return f"{name} {fmt_at_rate(medians)}" + (f" ({len(failed)} of {len(runs)} runs failed: {failed[0].failed})"
                                                   if failed else "")

    ratios = [f"{name} {ratio_text(r)}" for key, name in (("p99.9_us", "P99.9"), ("p99.99_us", "P99.99"))
              if (r := served.vs_default.get(key)) is not None and r.ratio is not None]
    vs = f"; the answer's {' and '.join(ratios)} the defaults'" if ratios else ""
    answer = next((n for n in served.names if n != DEFAULT_BASELINE), None)
    if answer is not None and "p99.99_us" in ranking.served_over_cost(served, answer, DEFAULT_BASELINE):
        share = ranking.SERVED_MARGINS["p99.99_us"][0]
        vs += f"{':' if vs else ';'} at this rate its tail is WORSE than the defaults' (its median more than " \
            f"{1 + share:g}x theirs)"
    rounds = f"medians of {served.rounds} paired rounds" if served.rounds > 1 else "one run each"
    return (f"served at {served.rate:,.0f} writes/s, open loop ({served.how}; {served.duration:g} s runs and their "
            f"settle, {rounds}): " + "; ".join(of(n) for n in served.names) + vs)


_COST_NAMES = {**ranking.COST_NAMES, "memory_peak_bytes": "memory peak"}


def cost_line(summary: Summary) -> str | None:
    """What the re-validated best costs beside rocksdb-default, medians of the same rounds: disk, stored
    write amplification, write-stall time, memory peak (a program's: those of them it printed, by their
    names); and which of them exceed the defaults' by more than COST_MARGINS. A study answered by its capacity
    stage (:func:`capacity_answer`): its best's search run at its held rate beside the defaults' at theirs. None
    without either."""
    reval = summary.revalidation
    if reval is None:
        return _held_cost_line(summary)
    if not reval.best:
        return None
    best, default = _rows(summary, reval.best)
    if best is None or default is None:
        return None
    program = not runs_workloads(summary)  # a program's metrics: by their names, those it printed
    pairs = {}
    for key, name in _COST_NAMES.items():
        if program:
            name = key
            if not any(row.value(key) is not None for row in summary.comparison):
                continue
        pairs[name] = (key, best.median(key), default.median(key))
    return _cost_words(summary, reval.best, "medians of the rounds", pairs)


def _held_cost_line(summary: Summary) -> str | None:
    """cost_line of a study answered by its capacity stage: the best's search run at its held rate and the defaults'
    at theirs (the runs the cost guard compared); None for any other study."""
    default = summary.baseline(DEFAULT_BASELINE)
    if capacity_answer(summary) is None or summary.best is None or default is None:
        return None
    pairs = {name: (key, summary.best.metrics.get(key), default.metrics.get(key)) for key, name in _COST_NAMES.items()}
    return _cost_words(summary, f"trial {summary.best.trial}", "each at its held rate in the search", pairs)


def _cost_words(summary: Summary, best: str, how: str, pairs: dict[str, tuple[str, Any, Any]]) -> str | None:
    """``cost of NAME beside rocksdb-default, HOW: disk X against Y (Rx), ...``, and which exceed the defaults' by
    more than COST_MARGINS; ``pairs``: each cost's words -> its metric, the best's value and the defaults'."""
    parts, over = [], []
    for name, (key, a, b) in pairs.items():
        if a is None or b is None:
            continue
        parts.append(f"{name} {fmt_cost(key, a)} against {fmt_cost(key, b)}" + (f" ({a / b:.2f}x)" if b else ""))
        if ranking.over_cost({key: a}, {key: b}):
            share, least = ranking.COST_MARGINS[key]
            allowed = f"{share:.0%}" if share else f"{fmt_cost(key, least)}"
            over.append(f"{name} (more than {allowed} above the defaults')")
    if not parts:
        return None
    used = summary.answer is not None and summary.answer.recommend == "best"
    line = f"cost of {best}{' (the answer)' if used else ''} beside rocksdb-default, {how}: " + ", ".join(parts)
    return line + (f"; it costs MORE than the defaults: {', '.join(over)}" if over else "")


def _value(v: Any) -> str:
    return fmt_bytes(v) if isinstance(v, int) and not isinstance(v, bool) and v >= 2**16 else str(v)
