"""summary.json read as a typed, versioned :class:`tuner.summary.Summary`: every committed record
loads, reads back as it was written, and a schema this version does not know is refused in one line."""

from __future__ import annotations

import json
import math
import statistics
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from objectives.scores import HELD
from tuner import ranking
from tuner.observers._mlflow import _answer_marks
from tuner.outputs import closing_table
from tuner.outputs._answer import answer, answer_of, cost_line, gain_lines, target_lines
from tuner.outputs._report import verdict_lines
from tuner.stats import paired_ratio, resolution
from tuner.summary import SCHEMA_VERSION, BestTrial, Build, Summary, SummaryError

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = sorted(subprocess.run(["git", "ls-files", "*summary.json"], cwd=ROOT, capture_output=True, text=True,
                                  check=True).stdout.split())
NEWEST = "experiments/default_job/results/default-job-11.8.1-2026-11-27/summary.json"


def test_the_records_are_found():
    assert NEWEST in COMMITTED and len(COMMITTED) >= 7


@pytest.mark.parametrize("path", COMMITTED)
def test_every_committed_summary_loads_and_reads_back_as_written(path):
    """Older records (no ``schema`` key) load; ``to_dict`` gives the file back, key for key and in its
    order, with the schema first; and ``from_dict`` of that is the same summary."""
    data = json.loads((ROOT / path).read_text())
    summary = Summary.load(ROOT / path)
    assert summary.study == data["study"] and summary.trials.complete == data["trials"]["complete"]
    assert (summary.best.trial if summary.best else None) == (data["best"] or {}).get("trial")
    out = summary.to_dict()
    assert out == {"schema": SCHEMA_VERSION, **{k: v for k, v in data.items() if k != "schema"}}
    assert list(out) == ["schema", *(k for k in data if k != "schema")]
    assert Summary.from_dict(out) == summary
    assert json.loads(summary.to_json()) == out


def test_a_real_record_reads_as_attributes():
    summary = Summary.load(ROOT / NEWEST)
    reval = summary.revalidation
    assert reval is not None and reval.best_vs_reference is not None and summary.answer is not None
    assert reval.best == f"trial {reval.best_trial}" == summary.answer.name
    assert reval.best_vs_reference.verdict == "faster" and len(reval.best_vs_reference.ci95 or []) == 2
    assert reval.select is not None and reval.select.rank_correlation is not None
    assert summary.comparison[0].name == "rocksdb-default" and summary.comparison[0].spread is not None
    assert summary.comparison[0].value("ops_per_sec") == reval.measured("ops_per_sec")["rocksdb-default"].median(
        "ops_per_sec")
    assert summary.target is not None and summary.target.shape.num_levels == 7
    assert summary.preload is not None and summary.preload.trials is not None
    assert summary.build is not None and summary.build.kind == "release"
    assert not hasattr(summary, "best_trial")  # a misspelt key is an error, not a silent None


def test_what_measured_is_a_build_and_schema_1s_db_bench_reads_as_one():
    """Schema 2 writes what measured as ``build`` and the runs' seed as ``run_seed``; a file of schema 1
    (``db_bench``, ``db_bench_seed``) reads as those fields and writes back as it was read."""
    data = json.loads((ROOT / NEWEST).read_text())
    old = Summary.from_dict(data)
    assert old.build == Build.probed(data["db_bench"]) and old.run_seed == data["db_bench_seed"]
    assert old.build is not None and old.build.identity == {"version": "11.8.1", "assertions": False}
    assert "build" not in old.to_dict() and old.to_dict()["db_bench"] == data["db_bench"]
    new = Summary(study="s", build=old.build, run_seed=old.run_seed).to_dict()
    assert new["build"] == old.build.to_dict() and "db_bench" not in new and "db_bench_seed" not in new
    assert Summary.from_dict(new).build == old.build


def test_a_tie_says_what_its_rounds_could_tell():
    """The default job of 2026-12-01 with direct I/O in the space tied the defaults (1.06x in 6 rounds): its
    closing table says how large a difference 6 rounds of that spread tell apart and how many rounds its
    estimate would need; an answer that beat the defaults says nothing of the kind."""
    tie = Summary.load(ROOT / "experiments/default_job/results/default-job-dio-11.8.1-2026-12-01/summary.json")
    gain = tie.revalidation.best_vs_reference if tie.revalidation else None
    assert gain is not None and gain.verdict == "tie" and gain.ratio and gain.ci95 and gain.n == 6
    can = resolution(gain.ratio, gain.ci95, gain.n)
    assert can.rounds_needed is not None and can.rounds_needed > gain.n and can.smallest > gain.ratio
    assert (f"resolution: 6 paired rounds of this spread tell apart only differences of {can.smallest:.2f}x or more; "
            f"an estimate of {gain.ratio:.2f}x would need about {can.rounds_needed} rounds of this spread to tell "
            f"(--revalidate-rounds {can.rounds_needed}; with --budget, one that fits them)") in closing_table(tie)
    assert "resolution:" not in closing_table(Summary.load(ROOT / NEWEST))


def test_a_ties_answer_carries_its_resolution_to_mlflow_and_a_gain_does_not():
    """The answer's run in MLflow holds what the closing table's resolution line says, for ties only."""
    tie = answer_of(Summary.load(ROOT / "experiments/default_job/results/default-job-dio-11.8.1-2026-12-01/summary.json"))
    assert tie is not None and tie.verdict == "tie" and tie.ratio and tie.ci95 and tie.rounds == 6
    can = resolution(tie.ratio, list(tie.ci95), tie.rounds)
    _, metrics = _answer_marks(tie)
    assert (metrics["answer.resolution"], metrics["answer.rounds_needed"]) == (can.smallest, can.rounds_needed)
    gain = answer_of(Summary.load(ROOT / NEWEST))
    assert gain is not None and gain.verdict == "faster"
    assert not {"answer.resolution", "answer.rounds_needed"} & set(_answer_marks(gain)[1])


@pytest.mark.parametrize("schema", [SCHEMA_VERSION + 1, "1", -1, True])
def test_a_schema_it_does_not_know_is_refused_in_one_line_naming_the_file(tmp_path, schema):
    path = tmp_path / "summary.json"
    path.write_text(json.dumps({"schema": schema, **json.loads((ROOT / NEWEST).read_text())}))
    with pytest.raises(SummaryError) as raised:
        Summary.load(path)
    message = str(raised.value)
    assert message == (f"{path}: unknown summary schema {schema!r}: this rocksdb-tuner reads schema {SCHEMA_VERSION} "
                       "and older (was it written by a newer one?)")
    assert "\n" not in message


def test_the_current_schema_and_a_file_without_one_load(tmp_path):
    path = tmp_path / "summary.json"
    path.write_text(json.dumps({"schema": SCHEMA_VERSION, "study": "s", "best": {"trial": 3}}))
    assert Summary.load(path).best == BestTrial(trial=3)
    path.write_text(json.dumps({"study": "s"}))
    summary = Summary.load(path)
    assert summary.best is None and summary.trials.complete == 0 and summary.objective_metric == "ops_per_sec"


@pytest.mark.parametrize("text, error", [
    ("{not json", "cannot read it"),
    (json.dumps({"best": "trial 3"}), "summary.json.best: expected an object, found str"),
    (json.dumps({"revalidation": {"vs": {"rocksdb-default": 1.5}}}),
     "summary.json.revalidation.vs.rocksdb-default: expected an object, found float"),
])
def test_a_file_that_is_not_a_summary_is_one_error_naming_where(tmp_path, text, error):
    path = tmp_path / "summary.json"
    path.write_text(text)
    with pytest.raises(SummaryError, match=error):
        Summary.load(path)


def test_the_cost_line_states_what_the_answer_costs_beside_the_defaults():
    """The closing table's cost line: the answer's medians of disk and stored write amp beside the defaults'
    from the same rounds, and a flag where one exceeds COST_MARGINS (the 2026-11-27 answer, uncompressed,
    wrote 2.29 times the defaults' bytes; the 2026-11-29 one, LZ4, 1.14 times, within the margin)."""
    flagged = closing_table(Summary.load(ROOT / NEWEST))
    assert ("cost of trial 69 (the answer) beside rocksdb-default, medians of the rounds: write amp 5.83 against "
            "2.55 (2.29x); it costs MORE than the defaults: write amp (more than 25% above the defaults')") in flagged
    within = closing_table(Summary.load(ROOT / "experiments/default_job/results/default-job-11.8.1-2026-11-29/summary.json"))
    line = next(ln for ln in within.splitlines() if ln.startswith("cost of trial 63 (the answer)"))
    assert "disk 1.3 GiB against 1.3 GiB (1.00x), write amp 2.94 against 2.57 (1.14x)" in line
    assert "MORE" not in line


@pytest.mark.parametrize("metrics, over", [
    ({"db_size_bytes": 110, "write_amp": 1.25, "stall_micros": 100_000}, []),  # at each margin: within
    ({"db_size_bytes": 111, "write_amp": 1.0, "stall_micros": 0}, ["db_size_bytes"]),
    ({"db_size_bytes": 100, "write_amp": 1.26, "stall_micros": 100_001}, ["write_amp", "stall_micros"]),
    ({"sst_bytes": 120, "write_amp": None}, ["sst_bytes"]),  # a metric the run lacks is no cost
])
def test_the_cost_guard_is_each_margin_over_the_defaults(metrics, over):
    default = {"db_size_bytes": 100, "sst_bytes": 100, "write_amp": 1.0, "stall_micros": 0}
    assert ranking.over_cost(metrics, default) == over


def test_the_best_at_any_cost_is_said_beside_the_answer():
    summary = Summary.from_dict({"objective_metric": "ops_per_sec", "costly": {
        "trial": 87, "gain": 1.3, "over": {"db_size_bytes": 1.7, "write_amp": 2.04}}})
    line = next(ln for ln in gain_lines(summary) if ln.startswith("best at any cost"))
    assert line == ("best at any cost: trial 87, 1.30x rocksdb-default's ops_per_sec in the search, kept from the "
                    "finalists by the cost guard: disk 1.70x, write amp 2.04x the defaults' in its search run "
                    "(--any-cost lets the re-validation choose it)")



def _beat(stalls: float, tails: tuple[list[float], list[float]] | None = None, guard: bool = True,
          served_stalls: float = 0.0) -> Summary:
    """A study whose re-validated best beat rocksdb-default 1.14x (interval above 1) with ``stalls`` us of write
    stalls (median) against none, and served at a rate in two paired rounds with ``tails``, the P99.99s (us) of
    trial 74's runs and the defaults', trial 74 stalling ``served_stalls`` us in each."""
    faster = {"against": "rocksdb-default", "n": 6, "ratio": 1.14, "ci95": [1.09, 1.20], "p_value": 0.001,
              "verdict": "faster"}
    rows = [{"name": "rocksdb-default", "median_ops_per_sec": 186_000.0, "median_stall_micros": 0.0,
             "median_write_amp": 2.43, "median_db_size_bytes": 1.45e9},
            {"name": "trial 74", "trial": 74, "median_ops_per_sec": 208_000.0, "median_stall_micros": stalls,
             "median_write_amp": 2.93, "median_db_size_bytes": 1.44e9}]
    runs = [{"name": name, "round": r + 1, "metrics": {"p99.99_us": tail[r], "stall_micros": stalled}}
            for name, tail, stalled in (("trial 74", tails[0], served_stalls), ("rocksdb-default", tails[1], 0.0))
            for r in range(2)] if tails else []
    served = {"rate": 130_000.0, "rounds": 2, "names": ["rocksdb-default", "trial 74"], "runs": runs} if tails else None
    return Summary.from_dict({"objective_metric": "ops_per_sec", "best": {"trial": 74}, "trials": {"complete": 90},
                              "revalidation": {"reference": "rocksdb-default", "best": "trial 74", "best_trial": 74,
                                               "best_vs_reference": faster, "configurations": rows},
                              "served": served, "cost_guard": guard})


WORSE_TAIL = ("served at 130,000 writes/s, P99.99 388.0 ms against 31.6 ms (12.28x), medians of 2 paired rounds, "
              "beyond in 2 of them")


@pytest.mark.parametrize("stalls, tails, served_stalls, over", [
    (770_000.0, None, 0.0, ["write stalls 0.77 s against 0.00 s in its rounds"]),
    (0.0, ([350_000.0, 426_000.0], [42_000.0, 21_200.0]), 0.0, [WORSE_TAIL]),
    (770_000.0, ([350_000.0, 426_000.0], [42_000.0, 21_200.0]), 0.0,
     ["write stalls 0.77 s against 0.00 s in its rounds", WORSE_TAIL]),
    (0.0, ([350_000.0, 50_000.0], [42_000.0, 40_000.0]), 0.0,  # one long pause: beyond in one round alone
     ["served at 130,000 writes/s, P99.99 200.0 ms against 41.0 ms (4.88x), medians of 2 paired rounds, beyond in 1 "
      "of them"]),
    (0.0, ([30_000.0, 40_000.0], [42_000.0, 21_200.0]), 500_000.0,
     ["served at 130,000 writes/s, write stalls 0.50 s against 0.00 s, medians of 2 paired rounds, beyond in 2 of "
      "them"]),
])
def test_an_answer_that_costs_more_at_the_target_or_serves_a_worse_tail_keeps_the_defaults(stalls, tails,
                                                                                           served_stalls, over):
    """The cost guard holds the answer, not only the finalists: a best that beat the defaults but, in the
    re-validation's rounds, stalled writes beyond the margin, or, served at a rate, had a median P99.99 more than
    three times the defaults' (make tune's answer of 2026-12-05 at 96595c6: 12.98x in 2 rounds, a paired interval of
    0.04-3815 that no interval rule could call worse) or stalled there beyond the margin, is not the answer;
    --any-cost (cost_guard false) answers it."""
    found = answer(_beat(stalls, tails, served_stalls=served_stalls))
    assert found is not None and (found.recommend, found.name) == ("reference", "rocksdb-default")
    assert found.why == ("trial 74 beat rocksdb-default in the re-validation (1.14x, its 95 % interval above 1) but "
                         f"costs more than the cost guard allows: {'; '.join(over)}; keep the defaults (--any-cost "
                         "answers trial 74)")
    lifted = answer(_beat(stalls, tails, guard=False, served_stalls=served_stalls))
    assert lifted is not None and (lifted.recommend, lifted.name) == ("best", "trial 74")


def _with_capacity(summary: Summary, best: list[float], defaults: list[float]) -> Summary:
    """``summary`` with --slo's capacities of trial 74 and rocksdb-default at p99.9<=10ms over paired rounds."""
    ratio = {"against": "rocksdb-default", **paired_ratio(best, defaults).to_dict()}
    return Summary.from_dict({**summary.to_dict(), "capacity": {
        "slo": "p99.9<=10ms", "metric": "p99.9_us", "bound": 10_000.0, "rounds": len(best), "duration": 60.0,
        "configurations": [{"name": "rocksdb-default", "held_by_round": defaults},
                           {"name": "trial 74", "held_by_round": best}],
        "vs_default": {"trial 74": ratio}}})


def test_an_answer_that_holds_less_of_a_rate_at_the_slo_keeps_the_defaults():
    """With --slo, a capacity at it below the defaults' (the paired ratio's interval under 1) is a cost beyond the
    guard, as a worse served tail is: the throughput job's answer of 2026-12-05 ran 1.13x the defaults at full
    speed and served its rate within the served guard, but held 0.79x their capacity at p99.9<=10ms in 5 paired
    rounds (experiments/service_level, capacity-trial41 record). A tie keeps the answer: its rounds could not tell.
    Synthetic rounds; the ratio is their geometric mean, worked out here."""
    defaults = [84_853.0, 94_970.0, 86_336.0, 82_319.0, 86_336.0]
    lower = [0.75 * d for d in defaults[:4]] + [0.80 * defaults[4]]
    ratio = paired_ratio(lower, defaults)
    assert ratio.verdict == "slower" and ratio.ratio == pytest.approx(
        math.exp(statistics.fmean(math.log(b / a) for a, b in zip(defaults, lower))))
    found = answer(_with_capacity(_beat(0.0), lower, defaults))
    assert found is not None and (found.recommend, found.name) == ("reference", "rocksdb-default")
    low, high = ratio.ci95
    assert found.why.endswith(f"costs more than the cost guard allows: capacity at p99.9<=10ms {ratio.ratio:.2f}x "
                              f"(95 % CI {low:.2f}-{high:.2f}, p = {ratio.p_value:.2g}, 5 paired rounds) the "
                              "defaults'; keep the defaults (--any-cost answers trial 74)")
    lifted = answer(_with_capacity(_beat(0.0, guard=False), lower, defaults))
    assert lifted is not None and (lifted.recommend, lifted.name) == ("best", "trial 74")
    tied = [0.70 * defaults[0], 1.2 * defaults[1], 0.8 * defaults[2], 1.1 * defaults[3], 0.9 * defaults[4]]
    assert paired_ratio(tied, defaults).verdict == "tie"
    kept = answer(_with_capacity(_beat(0.0), tied, defaults))
    assert kept is not None and (kept.recommend, kept.name) == ("best", "trial 74")


def test_a_capacity_studys_answer_rests_on_its_capacity_stage_too():
    """In a study that scores capacity (--objective capacity), the --slo capacity stage searches the same measure in
    paired rounds of its own: a re-validated gain that stage finds a tie is not the answer, guard or no guard (the
    SLO job of 2026-12-07 answered trial 5 at 1.27x in 3 rounds; its capacity stage's rounds, below, tied:
    experiments/service_level, tune-slo-capacity-60k record), one it finds above the defaults is; a study of
    another objective keeps its answer on a tie, as before."""
    defaults = [55_020.0, 76_474.0, 72_915.0, 58_842.0]  # the record's capacity stage, recorded measurements
    tied = [60_000.0, 69_522.0, 69_522.0, 71_198.0]
    assert paired_ratio(tied, defaults).verdict == "tie"

    def study(best: list[float], guard: bool = True) -> Summary:
        summary = _with_capacity(_beat(0.0, guard=guard), best, defaults)
        return Summary.from_dict({**summary.to_dict(), "objective_metric": HELD})
    for guard in (True, False):
        kept = answer(study(tied, guard))
        assert kept is not None and (kept.recommend, kept.name) == ("reference", "rocksdb-default")
        assert "the capacity stage, more paired rounds of the same measure, found 1.03x (95 % CI" in kept.why
    above = [1.3 * d for d in defaults]  # synthetic: 1.3x in every round
    used = answer(study(above))
    assert used is not None and (used.recommend, used.name) == ("best", "trial 74")
    throughput = answer(_with_capacity(_beat(0.0), tied, defaults))  # a tie is no cost to a throughput study
    assert throughput is not None and throughput.recommend == "best"


def test_a_capacity_study_without_a_re_validation_answers_from_its_capacity_stage():
    """`make tune`'s study scores capacity with no re-validation (--revalidate 0): the --slo capacity stage's paired
    rounds of the best and the defaults, which chose nothing, are its confirmation. Above the defaults (the interval
    above 1) it answers the best; a tie or less keeps the defaults, saying the ratio; one round (no interval) gives
    no answer; a best that is the defaults' own start (measured once, as rocksdb-default) keeps them. Synthetic
    rounds whose ratio is known: about 1.2x and 0.8x in every round, and a tie."""
    defaults = [120_000.0, 128_000.0, 133_000.0, 127_000.0]

    def study(best: list[float] | None, rounds: int = 4, disk: float = 1.58e9, guard: bool = True) -> Summary:
        data = {"objective_metric": HELD, "trials": {"complete": 12}, "cost_guard": guard,
                "best": {"trial": 5, "metrics": {"write_amp": 2.30, "sst_bytes": disk, "stall_micros": 0.0}},
                "baselines": [{"name": "rocksdb-default",
                               "metrics": {"write_amp": 2.19, "sst_bytes": 1.50e9, "stall_micros": 0.0}}]}
        if best is None:  # the best is trial 0, the defaults' own start: the stage measured rocksdb-default alone
            data["capacity"] = {"slo": "p99.9<=10ms", "rounds": rounds,
                                "configurations": [{"name": "rocksdb-default", "held_by_round": defaults[:rounds]}]}
            return Summary.from_dict(data)
        paired = {"trial 5": {"against": "rocksdb-default", **paired_ratio(best, defaults).to_dict()}} \
            if rounds > 1 else {}
        data["capacity"] = {"slo": "p99.9<=10ms", "rounds": rounds, "vs_default": paired,
                            "configurations": [{"name": "rocksdb-default", "held_by_round": defaults[:rounds]},
                                               {"name": "trial 5", "held_by_round": best[:rounds]}]}
        return Summary.from_dict(data)

    above = [r * d for r, d in zip((1.18, 1.22, 1.21, 1.19), defaults)]
    used = answer(study(above))
    assert used is not None and (used.recommend, used.name) == ("best", "trial 5")
    assert used.why.startswith("trial 5 held more of a rate than rocksdb-default at p99.9<=10ms in the capacity "
                               "stage's 4 paired rounds, which chose nothing (1.20x (95 % CI ")
    of = answer_of(replace(study(above), answer=used))  # as the study's observers are told it
    assert of is not None and (of.trial, of.ratio, of.verdict, of.rounds) == (5, pytest.approx(1.2, abs=0.001), "faster", 4)
    below = answer(study([r * d for r, d in zip((0.79, 0.81, 0.80, 0.80), defaults)]))
    assert below is not None and (below.recommend, below.name) == ("reference", "rocksdb-default")
    assert "in the capacity stage's 4 paired rounds, which chose nothing: it held less (0.80x" in below.why
    tied = [1.3 * defaults[0], 0.8 * defaults[1], 1.1 * defaults[2], 0.9 * defaults[3]]
    assert paired_ratio(tied, defaults).verdict == "tie"
    tie = answer(study(tied))
    assert tie is not None and tie.recommend == "reference" and ": no measurable difference (" in tie.why
    assert answer(study(above, rounds=1)) is None
    start = answer(study(None))
    assert start is not None and (start.recommend, start.name) == ("reference", "rocksdb-default")
    assert "is rocksdb-default's own start" in start.why
    assert answer(Summary.from_dict({**study(above).to_dict(), "objective_metric": "p99.9_us"})) is None
    # its costs: the best's search run at its held rate beside the defaults' at theirs, within the guard's margins
    line = cost_line(replace(study(above), answer=used))
    assert line == ("cost of trial 5 (the answer) beside rocksdb-default, each at its held rate in the search: "
                    "disk (SST files) 1.5 GiB against 1.4 GiB (1.05x), write amp 2.30 against 2.19 (1.05x), write "
                    "stalls 0.00 s against 0.00 s")
    costly = answer(study(above, disk=1.80e9))  # 1.20x the defaults' SST files: beyond the guard's 10 %
    assert costly is not None and (costly.recommend, costly.name) == ("reference", "rocksdb-default")
    assert costly.why.endswith("beyond the cost guard: disk (SST files); keep the defaults (--any-cost answers trial 5)")
    lifted = answer(study(above, disk=1.80e9, guard=False))
    assert lifted is not None and (lifted.recommend, lifted.name) == ("best", "trial 5")


@pytest.mark.parametrize("stalls, tails", [
    (100_000.0, None),  # stalls at the margin
    (0.0, ([126_000.0, 63_600.0], [42_000.0, 21_200.0])),  # a tail three times the defaults': at the margin
    (0.0, ([1_200.0, 1_200.0], [300.0, 300.0])),  # four times, but by less than 1 ms
    (0.0, None),
])
def test_an_answer_within_the_guard_and_a_tail_within_its_margin_is_used(stalls, tails):
    """Stalls at the margin (0.1 s) and a served median P99.99 at most three times the defaults' (or by less
    than 1 ms more) are within the guard: two runs of the defaults differed by up to 2.82x in medians of two
    rounds (experiments/service_level, served-guard record)."""
    found = answer(_beat(stalls, tails))
    assert found is not None and (found.recommend, found.name) == ("best", "trial 74")


@pytest.mark.parametrize("defaults_p99, why", [
    (8.0, "trial 74's medians in the re-validation break your bound p99_us <= 10 (--max-p99-us): 12.5; keep the "
          "defaults"),
    (11.0, "trial 74's medians in the re-validation break your bound p99_us <= 10 (--max-p99-us): 12.5, and "
           "rocksdb-default's too (p99_us <= 10 (--max-p99-us): 11): none measured there keeps it; keep the defaults"),
])
def test_an_answer_whose_medians_break_the_users_bound_keeps_the_reference(defaults_p99, why):
    """A bound the user set is a guard on the answer too: a best that beat the defaults 1.14x but whose P99's
    median over the re-validation's rounds (12.5 us) breaks --max-p99-us 10 is not the answer, whatever the
    defaults ran (said when they break it too); within the bound (9.5 us) it is."""
    def study(p99: float) -> Summary:
        data = _beat(0.0).to_dict()
        for row in data["revalidation"]["configurations"]:
            row["median_p99_us"] = p99 if row["name"] == "trial 74" else defaults_p99
        data["budgets"] = [{"metric": "p99_us", "limit": 10.0, "upper": True, "flag": "--max-p99-us"}]
        return Summary.from_dict(data)

    found = answer(study(12.5))
    assert found is not None and (found.recommend, found.name, found.why) == ("reference", "rocksdb-default", why)
    within = answer(study(9.5))
    assert within is not None and (within.recommend, within.name) == ("best", "trial 74")


def test_a_reference_that_breaks_the_users_constraint_is_not_the_answer():
    """The re-validated best ties rocksdb-default, which breaks the user's constraint: the answer is the
    best within it, saying why, and the verdict line does not advise keeping the defaults."""
    tie = {"against": "rocksdb-default", "n": 3, "ratio": 0.97, "ci95": [0.90, 1.05], "p_value": 0.4, "verdict": "tie"}
    data = {"objective_metric": "ops_per_sec", "best": {"trial": 4}, "trials": {"complete": 5},
            "breaks": {"rocksdb-default": ["memtables: write_buffer_size * max_write_buffer_number <= 64 * MiB is "
                                           "false for max_write_buffer_number=2, write_buffer_size=67108864"]},
            "revalidation": {"reference": "rocksdb-default", "best": "trial 4", "best_trial": 4,
                             "best_vs_reference": tie}}
    found = answer(Summary.from_dict(data))
    assert found is not None and (found.recommend, found.name) == ("best", "trial 4")
    assert found.why == ("rocksdb-default breaks your constraint memtables: write_buffer_size * max_write_buffer_number "
                         "<= 64 * MiB is false for max_write_buffer_number=2, write_buffer_size=67108864: not an "
                         "option; trial 4 is the best within it (0.97x rocksdb-default in the re-validation)")
    summary = Summary.from_dict({**data, "answer": found.to_dict()})
    assert verdict_lines(summary)[0].endswith("no measurable difference: but rocksdb-default breaks your constraints.")
    kept = Summary.from_dict({**data, "breaks": {}})
    assert verdict_lines(kept)[0].endswith("no measurable difference: keep your current configuration.")


def test_a_rate_study_whose_reference_is_noisy_over_the_rounds_says_so():
    """The second SLO study's figures: the defaults' P99.9 varied 111 % over the rounds at 60,000 writes/s."""
    tie = {"against": "rocksdb-default", "n": 4, "ratio": 0.56, "ci95": [0.01, 28.6], "p_value": 0.67, "verdict": "tie"}
    data = {"objective_metric": "p99.9_us", "objective_maximize": False, "best": {"trial": 0}, "trials": {"complete": 8},
            "revalidation": {"reference": "rocksdb-default", "best": "trial 0", "best_trial": 0,
                             "best_vs_reference": tie, "noise_cv_reference": 1.11}}
    said = [ln for ln in verdict_lines(Summary.from_dict({**data, "backend": "rate", "offered": {"writes": 60000.0}}))
            if "more than half its mean" in ln]
    assert len(said) == 1 and "`rocksdb-tuner measure --rate 60000 --duration 20m --windows 60s`" in said[0]
    assert not any("more than half its mean" in ln for ln in verdict_lines(Summary.from_dict(data)))
    calm = {**data, "revalidation": {**data["revalidation"], "noise_cv_reference": 0.17}}
    quiet = verdict_lines(Summary.from_dict({**calm, "backend": "rate"}))
    assert not any("more than half its mean" in ln for ln in quiet)


@pytest.mark.parametrize("background", ["low", "normal"])
def test_a_rate_study_at_nice_19_says_a_service_must_run_its_background_so(background):
    """Nice 19 is no OPTIONS option: the runs line says a deployment must lower its own threads' priority."""
    data = {"backend": "rate", "offered": {"writes": 150000.0, "background": background},
            "target": {"data_bytes": 2 << 30, "kind": "preloaded", "duration_seconds": 60.0}}
    runs = [ln for ln in target_lines(Summary.from_dict(data)) if ln.startswith("runs:")]
    said = "at nice 19 (--background-priority low): a host setting OPTIONS.ini cannot carry"
    assert len(runs) == 1 and (said in runs[0]) == (background == "low"), runs
    assert ("Env::LowerThreadPoolCPUPriority" in runs[0]) == (background == "low")


def test_a_best_that_is_the_defaults_own_start_is_said_under_the_table():
    """The capacity study's best was trial 0, rocksdb-default's start: its 1.95x over the baseline compares
    one configuration with itself, and the closing table says so; a best of another start, or none named,
    gets no such line."""
    data = json.loads((ROOT / "experiments/service_level/results/slo-capacity-130k-11.8.1-2026-12-06/summary.json").read_text())
    said = "best (trial 0) is rocksdb-default's own configuration (its start): its row and rocksdb-default's measure"
    assert said not in closing_table(Summary.from_dict(data))  # written before the summary named the start
    data["best"]["start"] = "rocksdb-default"
    assert said in closing_table(Summary.from_dict(data))
    data["best"]["start"] = "benchmark.sh"
    assert "own configuration" not in closing_table(Summary.from_dict(data))
