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
