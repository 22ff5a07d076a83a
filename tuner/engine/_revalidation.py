"""Re-validation: the search's answer re-measured, so that what the tuner reports holds up.

The best of many single noisy runs is partly the luckiest, and samples that choose a winner also
flatter it. So, after the search (on by default, ``--revalidate K``):

1. **select**: K finalists from distinct regions (:func:`tuner.ranking.distinct_top`) are measured in
   ``select_rounds`` rounds (past the first, while they and the gain's least rounds fit the --budget), beside the
   reference when there are several; the winner has the best median of the
   study's metric (ops/s, or the one --objective names: the highest, or the lowest when minimized)
   among those whose medians there cost no more than rocksdb-default's beyond the cost guard
   (ranking.COST_MARGINS; all of them when none is within it, or with --any-cost) (skipped when K is 1);
   with --serve-rate (and the guard), those finalists are then served at the rate beside rocksdb-default, best
   median first, until one serves within ranking.SERVED_MARGINS (tuner.engine._served.finalist_server): that
   one wins (the best when none does: the answer then keeps the reference);
2. **estimate**: the winner, the reference (``--baseline``'s configuration, else ``rocksdb-default``),
   the other baselines and, for the "why", the winner with each tuned option put back to the
   reference's value (one-at-a-time ablation) are measured in at least ``min_rounds`` rounds, more
   (up to ``max_rounds``) while the winner's interval against the reference is wider than
   ``target``; past ``MIN_ROUNDS`` (tuner.engine._budget), each round runs only while it fits the
   --budget (or the allowance), since the runs' lengths are estimates until measured. These rounds
   never chose anything, so they estimate the gain without selection bias;
3. **minimal**: the winner with only the options that measurably matter (the others at the
   reference's values), re-measured beside the reference and the full winner.

Every round runs its configurations in a fresh random order (seeded, so a resume repeats it), so
that drift and order effects do not favour one; ratios of the study's metric are paired by round
(tuner.stats.gain: above 1 is better, the reference's over the answer's for a minimized metric).
With ``--confirm-scale F`` all three run at scale F, and the search's order of the finalists is
compared with theirs there (Kendall's tau).

Each measurement is saved in the study storage as it is taken, so an interrupted re-validation
resumes where it stopped.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from optuna.trial import FrozenTrial, TrialState

from objectives.contract import Task
from objectives.scores import Score, label
from search_spaces import SearchSpace
from search_spaces.config import Config
from search_spaces.parameters import Parameter
from tuner import options_file, ranking
from tuner.backends import Measurement, RunFailed
from tuner.engine import _attrs as attrs
from tuner.engine._budget import MIN_ROUNDS
from tuner.engine._plan import Plan, Reference
from tuner.engine._storage import StudyStore
from tuner.fmt import fmt_duration, fmt_value
from tuner.model import DEFAULT_BASELINE, StudySnapshot
from tuner.stats import Ratio, Rounds, gain, rank_correlation, relative_width, sample_rows
from tuner.summary import Ablation, Measured, Revalidation, ServedReport

ATTR = "revalidation"
Measure = Callable[[str, Config, Path, Task | None], Measurement]
Serve = Callable[[str, Config], ServedReport]  # a finalist served beside rocksdb-default at --serve-rate


@dataclass
class Revalidator:
    """Measures configurations again, one run each, in rounds saved in the study."""

    store: StudyStore
    measure: Measure
    note: Callable[[str], None]
    out: Path
    afford: Callable[[float], bool] = lambda seconds: True  # do ``seconds`` more of runs fit the --budget?
    score: Score = Score()  # the study's: its metric is what the rounds compare
    guard: bool = True  # finalists cost no more than rocksdb-default beyond ranking.COST_MARGINS (--any-cost: False)
    parameters: tuple[Parameter, ...] = ()  # the space's: what names an entry's flags as a Config (Config.of)

    def revalidate(self, snapshot: StudySnapshot, plan: Plan, reference: Reference,
                   serve: Serve | None = None) -> Revalidation | None:
        """The stages above; ``serve`` (--serve-rate): the selection's served guard, tuner.engine._served."""
        space = snapshot.space
        trials, kept_out = self._affordable(snapshot)
        finalists = ranking.distinct_top(trials, snapshot.directions, plan.k, space.distance, prefer=snapshot.weights)
        if not finalists:  # none completed, or the cost guard kept every one out: then the reference is the answer
            return Revalidation(reference=reference.name, plan=_plan_dict(plan), kept_out=kept_out) if kept_out else None
        if reference.name == DEFAULT_BASELINE and not reference.values:
            reference = replace(reference, values=_default_values(snapshot))
        result: dict[str, Any] = {"reference": reference.name, "plan": _plan_dict(plan), "kept_out": kept_out}
        winner = finalists[0]
        if len(finalists) > 1:
            entries = {f"trial {t.number}": {"flags": space.config(t.params).flags(), "trial": t.number} for t in finalists}
            if plan.select_rounds > 1:  # each finalist against it, round by round; one round needs none
                entries[reference.name] = {"flags": reference.flags}
            self.note(f"re-validation: choosing among {len(finalists)} finalists from distinct regions of the space, "
                      + (f"beside {reference.name}, in {plan.select_rounds} rounds" if plan.select_rounds > 1 else
                         f"in one round (the gain's rounds measure the chosen one beside {reference.name})"))
            saved = self._select(snapshot, entries, plan, reference)
            rows = sample_rows(saved, entries, self.score.metric, self.score.needed)
            order, breaking, costly, said = _choose(rows, self.score, self.guard)
            for line in said:
                self.note(line)
            chosen, served_out = _served_guard(order, entries, serve, self.note, self.parameters, reference.name) \
                if serve is not None and self.guard else (order[0] if order else None, [])
            winner = next((t for t in finalists if t.number == chosen), winner)
            by_name = {r.name: r for r in rows}
            result["select"] = {"rounds": saved.rounds, "configurations": rows, "winner": f"trial {winner.number}",
                                **{key: [f"trial {n}" for n in passed] for key, passed in
                                   (("costly", costly), ("breaking", breaking), ("served_out", served_out))},
                                "vs_reference": {r.name: _ratio(by_name, r.name, reference.name, self.score)
                                                 for r in rows if r.trial is not None and reference.name in by_name},
                                "distance_to_winner": {f"trial {t.number}": round(space.distance(t.params, winner.params), 3)
                                                       for t in finalists},
                                "rank_correlation": _rank_change(finalists, rows, plan, self.score)}
        estimate = self._estimate(snapshot, plan, reference, winner)
        result.update(estimate)
        result["minimal"] = self._minimal(space, plan, reference, winner, estimate.get("ablation", []))
        result["seconds"] = self.seconds()
        return Revalidation.from_dict(result, "revalidation")

    def _affordable(self, snapshot: StudySnapshot) -> tuple[tuple[FrozenTrial, ...], int]:
        """The trials the finalists come from and how many complete ones the guard kept out: with the
        guard, those whose search run cost no more than rocksdb-default's beyond ranking.COST_MARGINS
        (all of them without its run)."""
        default = next((b for b in snapshot.baselines if b.name == DEFAULT_BASELINE and b.complete), None)
        if not self.guard or default is None:
            return snapshot.trials, 0
        within = tuple(ranking.within_cost(snapshot.trials, default.metrics))
        complete = sum(t.state == TrialState.COMPLETE for t in snapshot.trials)
        if len(within) < complete:
            self.note(f"re-validation: {complete - len(within)} of {complete} trials cost more than rocksdb-default "
                      f"beyond the cost guard ({ranking.margin_words()}) in their search runs: not finalists "
                      "(--any-cost lifts the guard)" + ("; none is left to re-validate: the answer is rocksdb-default"
                                                        if not within else ""))
        return within, complete - len(within)

    def _select(self, snapshot: StudySnapshot, entries: dict[str, dict[str, Any]], plan: Plan,
                reference: Reference) -> Rounds:
        """The finalists' rounds: past the first, each runs only while it and the gain's least rounds
        still fit the --budget (the plan sized them from estimated run lengths; at 8 GiB the
        re-validation's runs took longer, and a study overran its budget by 37 s)."""
        baselines = {reference.name} | {b.name for b in snapshot.baselines if b.complete}
        owed = (len(baselines) + 1) * min(plan.min_rounds, MIN_ROUNDS)  # the gain's least rounds, still to come
        rounds = 1
        while True:
            saved = self.rounds(entries, rounds, "select", plan)
            if saved.rounds >= plan.select_rounds or not self.afford(self._round_seconds(saved, entries, owed)):
                return saved
            rounds = saved.rounds + 1

    def seconds(self) -> float:
        """db_bench's wall time the re-validation has spent so far (all its stages)."""
        return sum(self._walls())

    def run_length(self) -> float | None:
        """The mean wall time of its runs so far (at the target, when it confirms there); None before any."""
        walls = self._walls()
        return sum(walls) / len(walls) if walls else None

    def _round_seconds(self, saved: Rounds, entries: dict[str, dict[str, Any]], owed: int) -> float:
        """What one more round of ``entries`` and ``owed`` runs of a later stage take: each entry's
        mean run so far (a mean of all runs undercounts slow defaults beside fast finalists: 70 s
        against 50 s at the 2 GiB target), the others at the mean of all."""
        mean = self.run_length() or 0.0
        walls = [[m.get("wall_seconds") or 0.0 for m in saved.samples.get(name, [])]
                 for name in entries if name not in saved.failed]
        return sum(statistics.mean(w) if w else mean for w in walls) + owed * mean

    def _walls(self) -> list[float]:
        stages = [attrs.rounds(self.store, f"{ATTR}:{stage}") for stage in ("select", "estimate", "minimal")]
        return [m.get("wall_seconds") or 0.0 for saved in stages if saved is not None
                for samples in saved.samples.values() for m in samples]

    def _estimate(self, snapshot: StudySnapshot, plan: Plan, reference: Reference, winner: Any) -> dict[str, Any]:
        space = snapshot.space
        best = f"trial {winner.number}"
        entries: dict[str, dict[str, Any]] = {reference.name: {"flags": reference.flags}}
        entries.update({b.name: {"flags": b.flags} for b in snapshot.baselines
                        if b.complete and b.name != reference.name})
        entries[best] = {"flags": space.config(winner.params).flags(), "trial": winner.number}
        ablated = _ablations(space, winner.params, reference) if plan.ablation else {}
        entries.update({f"{best} without {p}": {"flags": flags, "ablates": p} for p, flags in ablated.items()})
        self.note(f"re-validation: {best} against {reference.name} ({len(entries)} configurations, "
                  f"{plan.min_rounds} to {plan.max_rounds} rounds, until the interval is within {plan.target:.0%})")
        rounds = min(plan.min_rounds, MIN_ROUNDS)  # past these, a round runs only while it fits the --budget
        owed = 3 * plan.min_rounds if ablated else 0  # the minimal configuration's stage, still to come
        while True:
            saved = self.rounds(entries, rounds, "estimate", plan)
            rows = {r.name: r for r in sample_rows(saved, entries, self.score.metric, self.score.needed)}
            found = _gain(rows, best, reference.name, self.score)
            if ((rounds >= plan.min_rounds and relative_width(found) <= plan.target) or rounds >= plan.max_rounds
                    or best in saved.failed or not self.afford(self._round_seconds(saved, entries, owed))):
                break
            rounds += 1
        out: dict[str, Any] = {"rounds": saved.rounds, "configurations": list(rows.values()), "best": best,
                               "best_trial": winner.number, "best_vs_reference": _stored(found, reference.name),
                               "metric": self.score.metric, "maximize": self.score.maximize,
                               "vs": {name: _ratio(rows, best, name, self.score) for name in rows
                                      if name != best and "ablates" not in entries[name]}}
        noise = rows[reference.name].spread
        if noise:
            out["noise_cv_reference"] = noise.cv
        out["ablation"] = [Ablation.from_dict({"param": p, "value": winner.params[p],
                                               "reference_value": reference.values.get(p),
                                               **_ratio(rows, best, f"{best} without {p}", self.score)}, "ablation")
                           for p in ablated]
        return out

    def _minimal(self, space: SearchSpace, plan: Plan, reference: Reference, winner: Any,
                 ablation: list[Ablation]) -> dict[str, Any] | None:
        """The winner with only the options that matter, re-measured; None when that is all of them
        (or none: then the winner does not beat the reference by these options either)."""
        keep = {a.param for a in ablation if a.verdict == "faster"}
        dropped = {a.param for a in ablation} - keep
        if not ablation or not keep or not dropped:
            return None
        params = {p: v for p, v in winner.params.items() if p not in dropped}
        flags = _with_reference(space, winner.params, dropped, reference)
        best = f"trial {winner.number}"
        entries: dict[str, dict[str, Any]] = {reference.name: {"flags": reference.flags},
                                              best: {"flags": space.config(winner.params).flags()}, "minimal": {"flags": flags}}
        self.note(f"re-validation: the minimal configuration ({', '.join(sorted(keep))}) in {plan.min_rounds} rounds")
        saved = self.rounds(entries, plan.min_rounds, "minimal", plan)
        rows = {r.name: r for r in sample_rows(saved, entries, self.score.metric, self.score.needed)}
        return {"params": params, "flags": flags, "kept": sorted(keep), "reset": sorted(dropped),
                "rounds": saved.rounds, "configurations": list(rows.values()),
                "vs_reference": _ratio(rows, "minimal", reference.name, self.score),
                "vs_full": _ratio(rows, "minimal", best, self.score)}

    def rounds(self, entries: dict[str, dict[str, Any]], rounds: int, stage: str, plan: Plan) -> Rounds:
        """Measure each entry once per round, every round in a fresh random order; samples saved as
        taken (study attribute ``revalidation:<stage>``), so a resume goes on where it stopped, and more
        rounds extend the saved ones. An entry that fails once is dropped from later rounds."""
        return self.interleaved(entries, rounds, f"{ATTR}:{stage}", f"{stage} round", plan.seed, plan.workload)

    def interleaved(self, entries: dict[str, dict[str, Any]], rounds: int, attr: str, what: str, seed: int = 0,
                    workload: Task | None = None) -> Rounds:
        """Each entry's ``flags`` measured once per round, in a fresh random order; logs in OUT/<attr>/<entry>/round-<i>."""
        saved = attrs.rounds(self.store, attr)
        if saved is None or saved.entries != sorted(entries):
            saved = Rounds(entries=sorted(entries), samples={name: [] for name in entries})
        saved = saved.updated(rounds=max(saved.rounds, rounds), order=saved.order)  # written back with every key
        todo = []
        for r in range(rounds):
            order = random.Random(f"{seed}:{attr}:{r}").sample(sorted(entries), len(entries))
            if len(saved.order) <= r:
                saved.order.append(order)
            todo += [(r, name) for name in order if len(saved.samples[name]) <= r]
        started = time.monotonic()
        for done, (round_, name) in enumerate(todo, start=1):
            if name in saved.failed:
                continue
            log_dir = self.out / attr.replace(":", "-") / name.replace(" ", "-").replace(":", "-") / f"round-{round_}"
            try:
                m = self.measure(f"{what} {round_} {name}", Config.of(entries[name]["flags"], self.parameters), log_dir, workload)
            except RunFailed as exc:
                saved.failed[name] = exc.reason
                self.note(f"{what} {round_ + 1}/{rounds}: {name}: FAILED: {exc.reason}")
            else:
                saved.samples[name].append(m.metrics)
                eta = (time.monotonic() - started) / done * (len(todo) - done)
                self.note(f"{what} {round_ + 1}/{rounds}: {name}: {fmt_value(m.metrics.get(self.score.metric))} "
                          f"{label(self.score.metric)} "
                          f"(run {done} of {len(todo)}, ETA {fmt_duration(eta)})")
            attrs.keep_rounds(self.store, attr, saved)
        return saved


def _served_guard(order: list[int], entries: dict[str, dict[str, Any]], serve: Serve, note: Callable[[str], None],
                  parameters: tuple[Parameter, ...], reference: str) -> tuple[int | None, list[int]]:
    """The finalists in ``order`` served at --serve-rate one after another, each beside rocksdb-default, until
    one serves within ranking.SERVED_MARGINS: the winner (that one, else the first) and those that served beyond
    them, each said (when none does, the answer keeps the ``reference``)."""
    out: list[int] = []
    for n in order:
        name = f"trial {n}"
        report = serve(name, Config.of(entries[name]["flags"], parameters))
        over = ranking.served_beyond_words(report, name, DEFAULT_BASELINE)
        if not over:
            return n, out
        out.append(n)
        more = len(out) < len(order)
        note(f"re-validation: {name} served at {report.rate:,.0f} writes/s beyond the served guard: "
             f"{'; '.join(over)}: " + ("the next finalist is served" if more else
                                       "no finalist served within it; the best goes on, and the answer keeps "
                                       f"{reference} (--any-cost lifts the guard)"))
    return (order[0] if order else None), out


def _choose(rows: list[Measured], score: Score, guard: bool) -> tuple[list[int], list[int], list[int], list[str]]:
    """The finalists the selection may choose from its ``rows``, best median of the study's metric first: those
    whose medians keep the user's bounds and, with the ``guard``, cost no more than rocksdb-default's (measured
    in the same rounds) beyond ranking.COST_MARGINS (the answer would keep the reference over either); all when
    none does. Then the finalists passed over for each reason, and, when the leader is one of them, the note
    that says so."""
    sign = 1 if score.maximize else -1
    medians = {r.trial: m for r in rows if r.trial is not None and r.failed is None
               and (m := r.median(score.metric)) is not None}
    if not medians:
        return [], [], [], []

    default = next((r for r in rows if r.name == DEFAULT_BASELINE and r.failed is None), None)
    finalists = [r for r in rows if r.trial in medians]
    breaking = {r.trial: [b.describe() for b, _ in broken] for r in finalists
                if (broken := ranking.rows_out_of_bounds(r, score.budgets))}
    costly = {r.trial: found for r in finalists if guard and default is not None
              and (found := ranking.rows_over_cost(r, default))}
    keep = {n: m for n, m in medians.items() if n not in breaking} or medians
    eligible = {n: m for n, m in keep.items() if n not in costly} or keep
    best = max(medians, key=lambda n: sign * medians[n])
    said = []
    if best in breaking and len(breaking) < len(medians):
        said.append(f"re-validation: trial {best} led the selection's rounds but its medians there break your bound "
                    f"{'; '.join(breaking[best])}: the best finalist within it goes on")
    elif best in costly and len(costly) < len(medians):
        said.append(f"re-validation: trial {best} led the selection's rounds but cost more than {DEFAULT_BASELINE} in "
                    f"them beyond the cost guard ({', '.join(ranking.COST_NAMES[k] for k in costly[best])}): the "
                    "best finalist within it goes on (--any-cost lifts the guard)")
    return (sorted(eligible, key=lambda n: -sign * eligible[n]), sorted(n for n in breaking if n is not None),
            sorted(n for n in costly if n is not None), said)


def _default_values(snapshot: StudySnapshot) -> dict[str, Any]:
    """The values RocksDB ran rocksdb-default with, read back from its OPTIONS file (None where the
    file does not say, e.g. the block cache: the ablation then leaves the flag out)."""
    path = snapshot.out / "baselines" / DEFAULT_BASELINE / "OPTIONS"
    sections = options_file.parse_options(path.read_text()) if path.is_file() else {}
    return {p.name: options_file.decode(p.options_key, options_file.lookup(sections, p.options_key))
            for p in snapshot.space.parameters} if sections else {}


def _gain(rows: dict[str, Measured], a: str, b: str, score: Score) -> Ratio:
    """How many times better ``a`` is than ``b`` in the study's metric, paired by round."""
    return gain(rows[a].samples(score.metric), rows[b].samples(score.metric), score.maximize)


def _stored(ratio: Ratio, against: str) -> dict[str, Any]:
    """``ratio`` against ``against`` as the summary keeps it (tuner.summary.Ratio)."""
    return {"against": against, **ratio.to_dict()}


def _ratio(rows: dict[str, Measured], a: str, b: str, score: Score) -> dict[str, Any]:
    """:func:`_gain` as the summary keeps it."""
    return _stored(_gain(rows, a, b, score), b)


def _ablations(space: SearchSpace, params: dict[str, Any], reference: Reference) -> dict[str, dict[str, str]]:
    """Per tuned option that differs from the reference: the winner's flags with that option at the
    reference's value."""
    out = {}
    for name, value in params.items():
        if reference.values.get(name) is not None and str(reference.values[name]) == str(value):
            continue
        out[name] = _with_reference(space, params, {name}, reference)
    return out


def _with_reference(space: SearchSpace, params: dict[str, Any], names: set[str],
                    reference: Reference) -> dict[str, str]:
    """The flags of ``params`` with ``names`` set to the reference's values (left out where the
    reference uses db_bench's default), and options that are no longer active dropped."""
    merged = {k: v for k, v in params.items() if k not in names}
    merged.update({k: reference.values[k] for k in sorted(names) if reference.values.get(k) is not None})
    return space.config({k: v for k, v in merged.items() if space.parameter(k).active(merged)}).flags()


def _rank_change(finalists: list[Any], rows: list[Measured], plan: Plan, score: Score) -> dict[str, Any] | None:
    """When the re-validation runs elsewhere (the target, --confirm-scale, longer phases): how the finalists'
    order in the search (their trial's value of the study's metric) compares with their order there (its
    median), and whether the search's best stays the answer."""
    if plan.workload is None:
        return None
    sign = 1 if score.maximize else -1
    medians = {r.trial: m for r in rows if r.trial is not None and (m := r.median(score.metric)) is not None}
    pairs = [(ranking.primary(t), medians[t.number]) for t in finalists if t.number in medians]
    there = max(medians, key=lambda n: sign * medians[n]) if medians else None
    return {"confirm_scale": plan.confirm_scale, "confirm_data_bytes": plan.workload.data_bytes(),
            "confirm_duration_seconds": plan.workload.duration,
            "search_best": f"trial {finalists[0].number}", "confirmed_best": f"trial {there}",
            "changed": there is not None and there != finalists[0].number,
            f"search_{score.metric}": [p[0] for p in pairs],
            f"confirm_{score.metric}": [p[1] for p in pairs],
            "kendall_tau": rank_correlation([p[0] for p in pairs], [p[1] for p in pairs])}


def _plan_dict(plan: Plan) -> dict[str, Any]:
    return {"k": plan.k, "select_rounds": plan.select_rounds, "min_rounds": plan.min_rounds,
            "max_rounds": plan.max_rounds, "target": plan.target, "ablation": plan.ablation,
            "confirm_scale": plan.confirm_scale}
