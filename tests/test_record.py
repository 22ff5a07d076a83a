"""The record matches the files: figures that README, docs and the experiments overview quote are
read from the committed JSON they come from and must appear as quoted (a figure that changes is
regenerated there, not edited here)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tuner.outputs.deployment import search_gain

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"


def _json(path: str) -> dict[str, Any]:
    return json.loads((ROOT / path).read_text())


def _text(path: str) -> str:
    """A document with its line breaks and emphasis removed, so a figure may wrap or be bold."""
    return " ".join((ROOT / path).read_text().replace("**", "").split())


def _ratio(compared: dict[str, Any]) -> str:
    """``1.21x (1.04-1.40)``, as the documents quote a paired ratio and its 95 % interval."""
    low, high = compared["ci95"]
    return f"{compared['ratio']:.2f}x ({low:.2f}-{high:.2f})"


def _quoted(figure: str, documents: tuple[str, ...]) -> None:
    for doc in documents:
        assert figure in _text(doc), f"{doc} does not quote {figure!r} (from the committed JSON)"


def test_the_default_jobs_answer_is_quoted_as_its_summary_gives_it():
    summary = _json("benchmarks/results/default-job/summary.json")
    best = summary["revalidation"]["best_vs_reference"]
    low, high = best["ci95"]
    assert summary["answer"]["recommend"] == "reference" and best["verdict"] == "tie"
    _quoted(f"{best['ratio']:.2f}x, 95 % CI {low:.2f}-{high:.2f}, a tie", ("README.md",))
    _quoted(f"{best['ratio']:.2f}x (95 % CI {low:.2f}-{high:.2f})", ("README.md",))
    _quoted(f"{search_gain(summary):.2f}x in the search", ("README.md", "docs/scale.md"))
    seconds = summary["machine_seconds"]
    _quoted(f"{seconds['total']:,.0f} s of db_bench (preload {seconds['preload']:.0f} s, baselines "
            f"{seconds['baselines']:.0f} s, trials {seconds['trials']:,.0f} s, re-validation "
            f"{seconds['revalidation']:.0f} s)", ("README.md",))


@pytest.mark.parametrize("size", range(3))
def test_the_scale_transfer_table_is_quoted_as_its_json_gives_it(size):
    record = _json("benchmarks/results/scale-transfer/default-job.json")["sizes"][size]
    best, toy = (record["over_default"][name] for name in sorted(record["over_default"], key=lambda n: "toy" in n))
    tie = ", tie" if best["verdict"] == "tie" else ""
    _quoted(_ratio(best) + tie, ("README.md", "docs/scale.md", "experiments/results/overview-notes.md"))
    _quoted(_ratio(toy), ("README.md", "docs/scale.md", "experiments/results/overview-notes.md"))
    _quoted(f"{record['median_ops_per_sec']['rocksdb-default']:,.0f} ops/s", ("README.md", "docs/scale.md"))


def test_the_4_gib_target_is_quoted_as_its_summary_gives_it():
    summary = _json("benchmarks/results/target-4g/summary.json")
    best = summary["revalidation"]["best_vs_reference"]
    low, high = best["ci95"]
    _quoted(f"{search_gain(summary):.2f}x in the search", ("docs/scale.md",))
    _quoted(f"{best['ratio']:.2f}x at the target (4.0 GiB) ({best['n']} paired rounds that chose nothing, 95 % CI "
            f"{low:.2f}-{high:.2f})", ("docs/scale.md",))
    _quoted(f"{search_gain(summary):.2f}x and {best['ratio']:.2f}x (95 % CI {low:.2f}-{high:.2f}", ("README.md",))
    _quoted(f"({summary['machine_seconds']['total']:,.0f} s of db_bench", ("docs/scale.md",))


def test_the_sampler_benchmarks_write_recording_gap_is_quoted_as_its_json_gives_it():
    """The write-heavy recording's TPE and skopt regrets, averaged over 20, 40 and 80 trials as
    tests/test_efficiency.py ranks the samplers."""
    samplers = _json("experiments/results/sampler-benchmark.json")["workloads"]["space-write"]["samplers"]
    mean = {name: 100 * sum(samplers[name]["median_regret"][n - 1] for n in (20, 40, 80)) / 3 for name in ("tpe", "skopt")}
    assert mean["tpe"] < mean["skopt"]
    _quoted(f"by {mean['skopt'] - mean['tpe']:.1f} points ({mean['tpe']:.1f} % against skopt's {mean['skopt']:.1f} %)",
            ("README.md",))


def test_s4s_picks_re_measured_lower_by_what_its_result_gives():
    result = _json("experiments/results/S4/result.json")
    head = {c["name"]: c for c in result["head_to_head"]["configurations"]}
    drops = []
    for number, seed in enumerate(result["tuner"]["seeds"], start=1):
        pick = next(t for t in seed["trials"] if t["number"] == seed["best_trial"])
        drops.append(1 - head[f"tuned best (seed {number})"]["median_ops_per_sec"] / pick["ops_per_sec"])
    _quoted(f"{min(drops) * 100:.0f}-{max(drops) * 100:.0f} % lower", ("experiments/results/S4/reading.md",))


@pytest.mark.parametrize("seconds", [20, 30])
def test_the_phase_length_measurements_are_quoted_as_their_json_gives_them(seconds):
    size = _json(f"benchmarks/results/scale-transfer/phase-{seconds}s.json")["sizes"][0]
    _quoted(_ratio(size["best_over_default"]), ("README.md", "docs/scale.md"))
    medians = size["median_ops_per_sec"]
    _quoted(f"| {seconds} s | {medians['rocksdb-default']:,.0f}, ", ("docs/scale.md",))
    _quoted(f"{medians['best (trial 8)']:,.0f}, ", ("docs/scale.md",))


# -- S0-S4: the readings, README and the overview's notes quote the experiments' result.json ----------
# (the overview's tables are generated from the same files by `rocksdb-tuner experiment all --report-only`)
RERUN = "rerun-2026-11-25"


def _study(name: str, rerun: bool = False) -> dict[str, Any]:
    return _json(f"experiments/results/{name}/{RERUN + '/' if rerun else ''}result.json")


def _h2h(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["name"]: c for c in result["head_to_head"]["configurations"]}


def _over_seeds(result: dict[str, Any], against: str) -> tuple[str, str, str]:
    """``1.25x``, ``1.15-1.36`` and ``1.20x`` (the worst seed): the across-seeds ratio as the readings quote it."""
    r = result["tuner"]["across_seeds"][against]
    return f"{r['ratio']:.2f}x", f"{r['ci95'][0]:.2f}-{r['ci95'][1]:.2f}", f"{r['worst']:.2f}x"


def _vs_default(result: dict[str, Any], name: str) -> tuple[str, str]:
    r = _h2h(result)[name]["vs_default"]
    return f"{r['ratio']:.2f}x", f"{r['ci95'][0]:.2f}-{r['ci95'][1]:.2f}"


def _k(ops: float, digits: int = 0) -> str:
    return f"{ops / 1000:.{digits}f}k"


def _span(values: list[float], fmt: str) -> str:
    low, high = (fmt.format(v) for v in (min(values), max(values)))
    return low if low == high else f"{low}-{high}"


def _picks(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The head-to-head rows of the seeds' bests, by seed."""
    return [c for c in result["head_to_head"]["configurations"] if c.get("seed") is not None]


@pytest.mark.parametrize("name", ["S1", "S2", "S3"])
def test_the_readings_open_with_their_results_verdict(name):
    result = _study(name)
    ratio, ci, worst = _over_seeds(result, "vs_hand_found")
    d_ratio, d_ci, _ = _over_seeds(result, "vs_default")
    hand = _vs_default(result, result["hand_found"])
    doc = f"experiments/results/{name}/reading.md"
    _quoted(f"({ratio}, {ci} over 3 seeds, worst seed {worst})", (doc,))
    _quoted(f"({d_ratio}, {d_ci}", (doc,))
    _quoted(f"({hand[0]}, {hand[1]})", (doc,))


def test_s0s_reading_is_quoted_as_its_result_gives_it():
    r, doc = _study("S0"), ("experiments/results/S0/reading.md",)
    ratio, ci, worst = _over_seeds(r, "vs_hand_found")
    _quoted(f"({ratio}, {ci} over 3 seeds, worst seed {worst}) and the defaults ({'%s, %s' % _over_seeds(r, 'vs_default')[:2]})", doc)
    _quoted("is {} ({}) of the defaults here, a tie".format(*_vs_default(r, "hand-found:S0")), doc)
    _quoted("re-measured at {} ({})".format(*_vs_default(r, "sweep best")), doc)
    _quoted(f"the sweep's {r['sweep']['machine_seconds']['total']:.0f} s, {r['sweep']['runs']} trials", doc)
    picks = _picks(r)
    _quoted("the three picks are {}, {} and {} the defaults".format(
        *(f"{c['vs_default']['ratio']:.2f}x" for c in picks)), doc)
    h2h = _h2h(r)
    _quoted(f"Write amplification is {_span([c['median_write_amp'] for c in picks], '{:.1f}')} against the defaults' "
            f"{h2h['rocksdb-default']['median_write_amp']:.1f}; P99 {_span([c['median_p99_us'] for c in picks], '{:.1f}')} "
            f"us against {h2h['rocksdb-default']['median_p99_us']:.1f} us", doc)
    _quoted("is {} ({}) of the defaults, with a P99 of {:.1f} us".format(
        *_vs_default(r, "benchmark.sh"), h2h["benchmark.sh"]["median_p99_us"]), doc)


def test_s0s_re_run_is_quoted_as_its_result_gives_it():
    r, doc = _study("S0", rerun=True), ("experiments/results/S0/reading.md",)
    ratio, ci, worst = _over_seeds(r, "vs_hand_found")
    d_ratio, d_ci, _ = _over_seeds(r, "vs_default")
    _quoted(f"{r['tuner']['budget_seconds']:.0f} s (the sweep's {r['sweep']['runs']} runs)", doc)
    _quoted(f"{ratio} ({ci}), worst seed {worst}, and the defaults {d_ratio} ({d_ci})", doc)
    _quoted("4 jobs; {} the defaults, {})".format(*_vs_default(r, "sweep best")), doc)
    _quoted("ran at {} the defaults against {} for the same 4 jobs".format(
        _vs_default(r, "hand-found:S0")[0], _vs_default(r, "sweep best")[0]), doc)
    spent = [s["machine_seconds"]["total"] for s in r["tuner"]["seeds"]]
    _quoted(f"spent {_span(spent, '{:.0f}')} s of the {r['tuner']['budget_seconds']:.0f} s", doc)
    sweep = {t["params"]["subcompactions"]: t for t in r["sweep"]["trials"] if t["outcome"] == "complete"}
    more = [t for n, t in sweep.items() if n >= 3]
    _quoted(f"fell from {_k(sweep[1]['ops_per_sec'])} ops/s at 1 subcompaction to "
            f"{_span([t['ops_per_sec'] / 1000 for t in more], '{:.0f}k')} at 3-8, with write amplification rising "
            f"from {sweep[1]['write_amp']:.1f} to {_span([t['write_amp'] for t in more], '{:.1f}')}", doc)


def _best_runs(result: dict[str, Any]) -> list[float]:
    """Each seed's pick: the single run that made it its seed's best."""
    return [next(t for t in s["trials"] if t["number"] == s["best_trial"])["ops_per_sec"] for s in result["tuner"]["seeds"]]


def _medians(configurations: list[dict[str, Any]]) -> str:
    """``124k, 123k and 136k``: head-to-head medians as the readings list them."""
    k = [_k(c["median_ops_per_sec"]) for c in configurations]
    return ", ".join(k[:-1]) + " and " + k[-1]


def test_s1s_reading_is_quoted_as_its_result_gives_it():
    r, doc = _study("S1"), ("experiments/results/S1/reading.md",)
    h2h = _h2h(r)
    _quoted(f"The sweep took {r['sweep']['machine_seconds']['total']:.0f} s of machine time: {r['sweep']['runs']} runs", doc)
    _quoted(f"({_span([s['machine_seconds']['total'] for s in r['tuner']['seeds']], '{:.0f}')} s spent)", doc)
    first, *others = _best_runs(r)
    _quoted(f"seed 1 picked the defaults' trial ({first:,.0f} ops/s)", doc)
    _quoted(f"{others[0]:,.0f} and {others[1]:,.0f} in one run each", doc)
    _quoted(f"they are {_medians(_picks(r))} median against the defaults' {_k(h2h['rocksdb-default']['median_ops_per_sec'])} "
            f"and the hand-found configuration's {_k(h2h['hand-found:S1']['median_ops_per_sec'])}", doc)
    re = _study("S1", rerun=True)
    ratio, ci, worst = _over_seeds(re, "vs_hand_found")
    _quoted(f"{ratio} ({ci}), worst seed {worst}, and the defaults {'%s (%s)' % _over_seeds(re, 'vs_default')[:2]}", doc)
    _quoted("tied with the defaults again ({}, {})".format(*_vs_default(re, "hand-found:S1")), doc)


def test_s2s_reading_is_quoted_as_its_result_gives_it():
    r, doc = _study("S2"), ("experiments/results/S2/reading.md",)
    h2h = _h2h(r)
    default = _k(h2h["rocksdb-default"]["median_ops_per_sec"])
    _quoted(f"re-measured at {_k(h2h['hand-found:S2']['median_ops_per_sec'])} median against the defaults' {default}", doc)
    sweep = next(t for t in r["sweep"]["trials"] if t["number"] == r["sweep"]["best_trial"])
    _quoted(f"{_k(sweep['ops_per_sec'])} in its single run) re-measured at {_k(h2h['sweep best']['median_ops_per_sec'])}, "
            f"{_vs_default(r, 'sweep best')[0]} the defaults", doc)
    _quoted(f"Each seed's best, re-measured: {_medians(_picks(r))} median against the defaults' {default}", doc)
    seeds = r["tuner"]["seeds"]
    _quoted(f"seed 2's (trial {seeds[1]['best_trial']})", doc)
    _quoted(f"seeds 1 and 3's (trials {seeds[0]['best_trial']} and {seeds[2]['best_trial']})", doc)
    picks = _picks(r)
    _quoted(f"write {picks[0]['median_write_amp']:.2f} and {picks[2]['median_write_amp']:.2f} against the defaults' "
            f"{h2h['rocksdb-default']['median_write_amp']:.2f}", doc)


def test_s2s_re_run_is_quoted_as_its_result_gives_it():
    r, doc = _study("S2", rerun=True), ("experiments/results/S2/reading.md",)
    ratio, ci, worst = _over_seeds(r, "vs_hand_found")
    _quoted(f"{ratio} ({ci}), worst seed {worst}", doc)
    _quoted("loses to the defaults again ({}, {})".format(*_vs_default(r, "hand-found:S2")), doc)
    _quoted("ties the defaults, {} ({})".format(*_over_seeds(r, "vs_default")[:2]), doc)
    _quoted(f"The budget ({r['tuner']['budget_seconds']:.0f} s", doc)
    picks = _picks(r)
    low, high = picks[1]["vs_default"]["ci95"]
    _quoted(f"re-measured at {picks[1]['vs_default']['ratio']:.2f}x ({low:.2f}-{high:.2f}) the defaults; seed 1's "
            f"(63 MiB x 3, lz4) at {picks[0]['vs_default']['ratio']:.2f}x", doc)
    _quoted("beat the defaults, {} ({}), where the table's run had {}".format(
        *_vs_default(r, "sweep best"), _vs_default(_study("S2"), "sweep best")[0]), doc)


def test_s3s_reading_is_quoted_as_its_result_gives_it():
    r, doc = _study("S3"), ("experiments/results/S3/reading.md",)
    h2h, picks, seeds = _h2h(r), _picks(r), r["tuner"]["seeds"]
    _quoted("re-measured at {} ({}) the defaults".format(*_vs_default(r, "sweep best")), doc)
    _quoted(f"(trials {seeds[0]['best_trial']} and {seeds[1]['best_trial']})", doc)
    _quoted(f"Re-measured they are {picks[0]['vs_default']['ratio']:.2f}x and {picks[1]['vs_default']['ratio']:.2f}x the "
            f"defaults, at write amplification {picks[0]['median_write_amp']:.2f} and {picks[1]['median_write_amp']:.2f} "
            f"(defaults {h2h['rocksdb-default']['median_write_amp']:.2f})", doc)
    _quoted(f"({_k(_best_runs(r)[2])}, trial {seeds[2]['best_trial']}) was picked and re-measured at "
            f"{_k(picks[2]['median_ops_per_sec'])} median, {picks[2]['vs_default']['ratio']:.2f}x the defaults, at write "
            f"amplification {picks[2]['median_write_amp']:.2f}", doc)
    runs = [s["runs"] for s in seeds]
    assert runs[0] == runs[2]
    _quoted(f"Seed 2 ran {runs[1]} trials against {runs[0]} for seeds 1 and 3", doc)
    _quoted(f"a third of its {seeds[1]['machine_seconds']['total']:.0f} s", doc)
    bsh = h2h["benchmark.sh"]["ops_per_sec"]
    _quoted(f"ran at {bsh[2]:,.0f} ops/s against {_span([v / 1000 for v in bsh[:2] + bsh[3:]], '{:.0f}k')} in its "
            "other four rounds", doc)
    _quoted("({}, {}) is that round".format(*_vs_default(r, "benchmark.sh")), doc)


def test_s4s_reading_is_quoted_as_its_result_gives_it():
    r, doc = _study("S4"), ("experiments/results/S4/reading.md",)
    h2h, picks, seeds = _h2h(r), _picks(r), r["tuner"]["seeds"]
    ratio, ci, worst = _over_seeds(r, "vs_hand_found")
    _quoted(f"({ratio}, {ci} over 3 seeds, worst seed {worst}) and the defaults ({'%s, %s' % _over_seeds(r, 'vs_default')[:2]})", doc)
    _quoted("is itself {} ({}) the defaults".format(*_vs_default(r, "hand-found:S4")), doc)
    vs_hand = h2h["sweep best"]["vs_hand_found"]
    _quoted("re-measured at {} ({}) the defaults and {:.2f}x ({:.2f}-{:.2f}) the hand-found".format(
        *_vs_default(r, "sweep best"), vs_hand["ratio"], *vs_hand["ci95"]), doc)
    medians = _span([c["median_ops_per_sec"] / 1000 for c in picks], "{:.1f}k")
    _quoted(f"{medians} median against {_k(h2h['sweep best']['median_ops_per_sec'], 1)}, with P99 "
            f"{_span([c['median_p99_us'] for c in picks], '{:.0f}')} us against {h2h['sweep best']['median_p99_us']:.0f} us", doc)
    _quoted(f"({_span([v / 1000 for v in _best_runs(r)], '{:.1f}k')} ops/s); re-measured in 5 rounds they are {medians}", doc)
    _quoted(f"seed 1's (trial {seeds[0]['best_trial']})", doc)
    _quoted(f"(trial {seeds[2]['best_trial']}); seed 1's", doc)
    bsh = h2h["benchmark.sh"]["ops_per_sec"]
    _quoted(f"({bsh[2]:,.0f} ops/s against {_span([v / 1000 for v in bsh[:2] + bsh[3:]], '{:.0f}k')} in its other rounds)", doc)
    _quoted("({}, {}) is that round".format(*_vs_default(r, "benchmark.sh")), doc)


def test_the_versions_table_and_its_studys_re_validation_are_quoted_as_their_json_gives_them():
    """benchmarks/results/versions.json and the summary of the study it measured (2026-11-23, restored
    from commit 3b00fbd into default-job-fillrandom-2026-11-23/)."""
    versions = _json("benchmarks/results/versions.json")
    for version, measured in versions["versions"].items():
        medians = measured["median_ops_per_sec"]
        best, low, high = measured["best_over_default"]["ratio"], *measured["best_over_default"]["ci95"]
        row = " | ".join(f"{medians[name]:,.0f}" for name in ("rocksdb-default", "trial 21 (best)", "trial 73", "trial 13"))
        _quoted(f"| {row} | {best:.2f}× ({low:.2f}–{high:.2f}) |", ("README.md",))
    _quoted(f"(Kendall's tau {versions['kendall_tau']['7.8.3 vs 9.11.2']:.2f} over the 4 configurations", ("README.md",))
    summary = _json("benchmarks/results/default-job-fillrandom-2026-11-23/summary.json")
    assert summary["study"] == versions["study"] and summary["revalidation"]["best_trial"] == 21
    best = summary["revalidation"]["best_vs_reference"]
    _quoted(f"re-validation on 9.11.2 gave {best['ratio']:.2f}× ({best['ci95'][0]:.2f}–{best['ci95'][1]:.2f}", ("README.md",))
    cv = {day: _json(f"benchmarks/results/default-job-fillrandom-{day}/summary.json")["revalidation"]["noise_cv_reference"]
          for day in ("2026-11-23", "2026-11-25")}
    _quoted(f"CV was {100 * cv['2026-11-23']:.0f} % in the default job of 2026-11-23", ("README.md",))
    _quoted(f"{100 * cv['2026-11-25']:.1f} % in the two of 2026-11-25", ("README.md",))
