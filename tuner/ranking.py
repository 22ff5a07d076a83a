"""One ranking rule for a study's trials, used by progress, the report, re-validation and MLflow.

Complete trials rank best first by: meeting the budgets (``--max-*``; a trial that breaks them
ranks by how far), then, with several objectives, being on the Pareto front, then their utility:
its objective's value for one objective (ops/s, or the metric ``--objective`` names, highest or lowest
first as it is maximized or minimized); with several, how close they come to the ideal point, the best value of
every objective on the front at once, with each objective scaled to [0, 1] over the front and
weighted by ``--prefer`` (equal weights by default: the front's knee). The recommended configuration
of a multi-objective study is the front member with the highest utility.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from optuna.trial import FrozenTrial, TrialState

from objectives.scores import Bound
from tuner.fmt import fmt_cost
from tuner.summary import Measured, Revalidation, ServedReport
from tuner.trials import TrialRecord

# What a configuration may cost beyond rocksdb-default's before the cost guard keeps it from being the
# answer: (a share more, and at least this much more) per metric, the disk (db_bench's DB, the driver's
# SST files), stored write amplification and write-stall time. Medians of rounds, or search runs.
COST_MARGINS = {"db_size_bytes": (0.10, 0.0), "sst_bytes": (0.10, 0.0), "write_amp": (0.25, 0.0),
                "stall_micros": (0.0, 100_000.0)}


# What the answer may cost served at --serve-rate beyond rocksdb-default in the same paired rounds: medians of
# the runs, a share more and at least this much more. At 130,000 writes/s on the default job's target, the
# defaults' P99.99 over their own second copy's, medians of any 2 of 6 paired rounds, ranged 0.81x-2.82x (of any 3,
# 1.11x-2.47x) and an answer that served 10x the defaults' tail 9.99x-15.08x (experiments/service_level,
# served-guard-130k-11.8.1-2026-12-05): the tail's margin lies beyond the first. At 56,000 writes/s (0.4 x, the share
# --serve-rate auto serves at now) the copy's ranged 1.00x-1.87x over any 3 of 6 rounds
# (served-low-56k-11.8.1-2026-12-06). Copies of the defaults beside them stayed within it in 6 of the 7 served so far
# (defaults-thrice-130k: in none of 56 subsets of 3 of its 8 rounds), and one, in rounds of frequent long pauses, went
# beyond (memtables-130k): served_rounds_beyond says in how many rounds.
SERVED_MARGINS = {"p99.99_us": (2.0, 1000.0), "stall_micros": COST_MARGINS["stall_micros"]}


COST_NAMES = {"db_size_bytes": "disk", "sst_bytes": "disk (SST files)", "write_amp": "write amp",
              "stall_micros": "write stalls"}


def served_margin_words() -> str:
    """SERVED_MARGINS in words: "a median P99.99 more than 3x the defaults' (and by more than 1 ms), or writes that
    stall 0.1 s more"."""
    share, least = SERVED_MARGINS["p99.99_us"]
    return (f"a median P99.99 more than {1 + share:g}x the defaults' (and by more than {least / 1e3:g} ms), or writes "
            f"that stall {SERVED_MARGINS['stall_micros'][1] / 1e6:g} s more")


def margin_words() -> str:
    """COST_MARGINS in words: "disk +10 %, write amp +25 %, write stalls +0.1 s"."""
    return ", ".join(f"{COST_NAMES[k]} +{share * 100:g} %" if share else f"{COST_NAMES[k]} +{least / 1e6:g} s"
                     for k, (share, least) in COST_MARGINS.items() if k != "sst_bytes")


def over_cost(metrics: Mapping[str, Any], default: Mapping[str, Any],
              margins: Mapping[str, tuple[float, float]] = COST_MARGINS) -> list[str]:
    """The ``margins`` metrics (COST_MARGINS unless given) on which ``metrics`` exceed ``default``'s beyond
    their margin."""
    over = []
    for key, (share, least) in margins.items():
        a, b = metrics.get(key), default.get(key)
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and a > b * (1 + share) and a - b > least:
            over.append(key)
    return over


def rows_over_cost(row: Measured, default: Measured) -> list[str]:
    """over_cost on the medians of two configurations' re-validation rounds."""
    a, b = ({key: v for key in COST_MARGINS if (v := r.median(key)) is not None} for r in (row, default))
    return over_cost(a, b)


def served_over_cost(served: ServedReport, name: str, default: str) -> list[str]:
    """The SERVED_MARGINS metrics on which ``name``'s median over its runs at --serve-rate exceeds ``default``'s
    beyond their margin."""
    a, b = ({key: v for key in SERVED_MARGINS if (v := served.median(n, key)) is not None} for n in (name, default))
    return over_cost(a, b, SERVED_MARGINS)


def served_beyond_words(served: ServedReport, name: str, default: str) -> list[str]:
    """Each SERVED_MARGINS metric on which ``name`` served beyond ``default`` (served_over_cost), in words, with
    the paired rounds in which it did so alone (one long pause moves a median of few rounds; a worse tail shows in
    every round): ``P99.99 388.0 ms against 31.6 ms (12.28x), medians of 2 paired rounds, beyond in 2 of them``."""
    words = []
    for key in served_over_cost(served, name, default):
        a, b = served.median(name, key) or 0.0, served.median(default, key) or 0.0
        what = f"P99.99 {a / 1e3:.1f} ms against {b / 1e3:.1f} ms" if key == "p99.99_us" else \
            f"{COST_NAMES.get(key, key)} {fmt_cost(key, a)} against {fmt_cost(key, b)}"
        beyond, paired = served_rounds_beyond(served, name, default, key)
        of = "them" if paired == served.rounds else paired
        rounds = "one run each" if served.rounds == 1 else f"medians of {served.rounds} paired rounds" + (
            f", beyond in {beyond} of {of}" if paired else "")
        words.append(what + (f" ({a / b:.2f}x)" if b else "") + f", {rounds}")
    return words


def served_rounds_beyond(served: ServedReport, name: str, default: str, key: str) -> tuple[int, int]:
    """In how many of the paired rounds at --serve-rate (both runs reporting ``key``) ``name``'s run exceeded
    ``default``'s beyond SERVED_MARGINS' margin on ``key``, and how many such rounds there were."""
    by = {(r.name, r.round): v for r in served.runs
          if r.failed is None and isinstance(v := r.metrics.get(key), (int, float))}
    rounds = [r for r in range(1, served.rounds + 1) if (name, r) in by and (default, r) in by]
    beyond = sum(bool(over_cost({key: by[(name, r)]}, {key: by[(default, r)]}, {key: SERVED_MARGINS[key]}))
                 for r in rounds)
    return beyond, len(rounds)


def rows_out_of_bounds(row: Measured, bounds: Iterable[Bound]) -> list[tuple[Bound, float]]:
    """The user's bounds that a configuration's medians over re-validation rounds break, with each median."""
    return [(b, v) for b in bounds if (v := row.median(b.metric)) is not None and b.excess(v) > 0]


def within_cost(trials: Iterable[FrozenTrial], default: Mapping[str, Any]) -> list[FrozenTrial]:
    """The complete trials whose run costs no more than ``default``'s run beyond COST_MARGINS."""
    return [t for t in trials if t.state == TrialState.COMPLETE and not over_cost(TrialRecord.of(t).metrics or {}, default)]


# Trial outcomes (user attribute "outcome"). Only complete, failed and pruned trials count toward --trials.
OUTCOMES = ("complete", "failed", "pruned", "rejected", "interrupted")
COUNTED = ("complete", "failed", "pruned")


def by_outcome(trials: Iterable[FrozenTrial]) -> dict[str, list[FrozenTrial]]:
    """Finished trials grouped by outcome (warm-start copies form a group of their own)."""
    groups: dict[str, list[FrozenTrial]] = {k: [] for k in OUTCOMES}
    for t in trials:
        if t.state == TrialState.PRUNED:
            groups["pruned"].append(t)
        elif t.state in (TrialState.COMPLETE, TrialState.FAIL):
            groups.setdefault(TrialRecord.of(t).outcome or "failed", []).append(t)
    return groups


def counted(trials: Iterable[FrozenTrial]) -> int:
    groups = by_outcome(trials)
    return sum(len(groups[k]) for k in COUNTED)


def primary(trial: FrozenTrial) -> float:
    """A complete trial's first objective value: ops/s, or the metric --objective names."""
    return float(trial.values[0])


def goodness(trial: FrozenTrial, direction: str) -> float:
    """The first objective value, higher the better whichever way it is optimized."""
    return primary(trial) if direction == "maximize" else -primary(trial)


def violation(trial: FrozenTrial) -> float:
    """How far a trial is over its budgets (0 when it meets them)."""
    return sum(max(0.0, c) for c in TrialRecord.of(trial).constraints)


def feasible(trial: FrozenTrial) -> bool:
    return all(c <= 0 for c in TrialRecord.of(trial).constraints)


def pareto_front(complete: Sequence[FrozenTrial], directions: Sequence[str]) -> list[FrozenTrial]:
    """The non-dominated trials among those meeting the budgets (among all, when none does)."""
    pool = [t for t in complete if feasible(t)] or list(complete)
    signs = [1 if d == "maximize" else -1 for d in directions]

    def dominates(a: FrozenTrial, b: FrozenTrial) -> bool:
        pairs = [(s * x, s * y) for s, x, y in zip(signs, a.values, b.values)]
        return all(x >= y for x, y in pairs) and any(x > y for x, y in pairs)

    return [t for t in pool if not any(dominates(o, t) for o in pool if o is not t)]


def utility(front: Sequence[FrozenTrial], directions: Sequence[str],
            prefer: Sequence[float] | None = None) -> Callable[[FrozenTrial], float]:
    """How good a trial is on several objectives: minus its weighted distance to the ideal point,
    each objective scaled to [0, 1] (1 = the front's best) over the front."""
    weights = list(prefer) if prefer else [1.0] * len(directions)
    spans = []
    for i, d in enumerate(directions):
        values = [t.values[i] for t in front] or [0.0]
        best_, worst = (max(values), min(values)) if d == "maximize" else (min(values), max(values))
        spans.append((best_, worst))

    def score(t: FrozenTrial) -> float:
        gap = 0.0
        for w, (best_, worst), v in zip(weights, spans, t.values):
            scaled = 1.0 if best_ == worst else (v - worst) / (best_ - worst)
            gap += w * (1.0 - scaled) ** 2
        return -math.sqrt(gap)

    return score


def ranked(trials: Iterable[FrozenTrial], directions: Sequence[str],
           prefer: Sequence[float] | None = None) -> list[FrozenTrial]:
    """Complete trials, best first (see the module's docstring)."""
    complete = by_outcome(trials)["complete"]
    if len(directions) == 1:
        return sorted(complete, key=lambda t: (violation(t), -goodness(t, directions[0])))
    front = pareto_front(complete, directions)
    on_front, value = {t.number for t in front}, utility(front, directions, prefer)
    return sorted(complete, key=lambda t: (violation(t), t.number not in on_front, -value(t)))


def top_k(trials: Iterable[FrozenTrial], directions: Sequence[str], k: int,
          prefer: Sequence[float] | None = None) -> list[FrozenTrial]:
    """The ``k`` best trials; only those meeting the budgets when any does."""
    order = ranked(trials, directions, prefer)
    return ([t for t in order if feasible(t)] or order)[:k]


def distinct_top(trials: Iterable[FrozenTrial], directions: Sequence[str], k: int,
                 distance: Callable[[dict[str, Any], dict[str, Any]], float], apart: float = 0.25,
                 near: float = 0.85, prefer: Sequence[float] | None = None) -> list[FrozenTrial]:
    """``k`` finalists from distinct regions: the best, then each time the best trial at least ``apart``
    (``distance``) from every one chosen among those within ``near`` of the best's first objective value
    (plausible winners, given run-to-run noise: at least ``near`` times it when maximized, at most
    1/``near`` times it when minimized); when no such trial is left, the next best. Not k neighbours of
    one optimum."""
    order = ranked(trials, directions, prefer)
    pool = ([t for t in order if feasible(t)] or order)
    if pool:
        lead = primary(pool[0])
        close = (lambda v: v >= near * lead) if directions[0] == "maximize" else (lambda v: v * near <= lead)
        pool = [t for i, t in enumerate(pool) if i < k or close(primary(t))]
    chosen: list[FrozenTrial] = []
    for t in pool:
        if len(chosen) < k and all(distance(t.params, c.params) >= apart for c in chosen):
            chosen.append(t)
    for t in pool:
        if len(chosen) < k and t not in chosen:
            chosen.append(t)
    return sorted(chosen, key=pool.index)


def best(trials: Sequence[FrozenTrial], directions: Sequence[str], revalidation: Revalidation | None = None,
         prefer: Sequence[float] | None = None) -> FrozenTrial | None:
    """The re-validated winner when there was a re-validation, else the first in rank."""
    if revalidation is not None and revalidation.best_trial is not None:
        return next(t for t in trials if t.number == revalidation.best_trial)
    order = ranked(trials, directions, prefer)
    return order[0] if order else None
