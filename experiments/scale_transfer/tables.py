"""The scale-transfer tables docs/results.md and experiments/default_job/README.md quote, made from this
experiment's records by `make record` (experiments/record.py): an answer beside the defaults at 1, 4 and 16
times the data it was tuned for, its ratio paired over rounds with its 95 % interval (``tie`` where that holds 1)."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from experiments.record import stamp
from experiments.scale_transfer.scale_transfer import experiment_records, experiments_table

RESULTS = Path(__file__).with_name("results")
CODE = ("experiments/scale_transfer/scale_transfer.py", "experiments/held_out.py", "objectives/measurement.py")
REFERENCE = "rocksdb-default"


def _record(name: str) -> tuple[Path, dict[str, Any]]:
    path = RESULTS / f"{name}.json"
    return path, json.loads(path.read_text())


def _ratio(g: dict[str, Any]) -> str:
    return f"{g['ratio']:.2f}x ({g['ci95'][0]:.2f}-{g['ci95'][1]:.2f}){', tie' if g['verdict'] == 'tie' else ''}"


def _data(size: dict[str, Any]) -> str:
    """``2 GiB, the target`` or ``8 GiB, 4x``: a size's data and its factor."""
    factor = size["factor"]
    return f"{size['data_bytes'] / 2**30:.0f} GiB, " + ("the target" if factor == 1 else f"{factor}x")


def deployed(name: str) -> str:
    """A default job's answer on larger DBs (record ``name``): the defaults' median ops/s, the answer's ratio to
    them, and both medians' write amplification."""
    path, measured = _record(name)
    (best,) = (c for c in measured["configurations"] if c != REFERENCE)
    trial = best.removeprefix("best (").removesuffix(")")
    rows = [f"| data | {REFERENCE} | {trial} / defaults | write amp, defaults / {trial} |", "|---|---:|---|---|"]
    for size in measured["sizes"]:
        amp = size["median_write_amp"]
        rows.append(f"| {_data(size)} | {size['median_ops_per_sec'][REFERENCE]:,.0f} ops/s | "
                    f"{_ratio(size['over_default'][best])} | {amp[REFERENCE]:.2f} / {amp[best]:.2f} |")
    return "\n".join([*rows, "", stamp(path, measured.get("commit"), measured["when"], CODE)])


def pinned() -> str:
    """The 40-minute default job's answer of 2026-11-26 (the pinned shape) on larger DBs, beside the toy answer
    of 2026-11-25 measured the day before at the same factors."""
    path, measured = _record("default-job")
    toy_path, toy = _record("default-job-20s-2026-11-25")
    earlier = {s["factor"]: s for s in toy["sizes"]}
    (best,) = (c for c in measured["configurations"] if c != REFERENCE)
    trial = best.removeprefix("best (").removesuffix(")")
    rows = [f"| data | {REFERENCE} | the answer ({trial}) / defaults | the toy answer / defaults (2026-11-25) |",
            "|---|---:|---|---|"]
    for size in sorted(measured["sizes"], key=lambda s: s["factor"]):
        (small,) = (g for n, g in earlier[size["factor"]]["over_default"].items() if "toy" in n)
        rows.append(f"| {_data(size)} | {size['median_ops_per_sec'][REFERENCE]:,.0f} ops/s | "
                    f"{_ratio(size['over_default'][best])} | {_ratio(small)} |")
    return "\n".join([*rows, "", stamp(path, None, measured["when"], CODE), "",
                      stamp(toy_path, None, toy["when"], CODE)])


def s0_s4() -> str:
    """The S0-S4 answers at 1, 4 and 16 times their tuning data (scale_transfer.py --table)."""
    records = experiment_records()
    return "\n".join([experiments_table(records), "",
                      stamp(RESULTS / "S[0-4].json", None, min(r["when"] for r in records), CODE)])


TABLES: dict[str, Callable[[], str]] = {
    "default_job": partial(deployed, "default-job-11.8.1-2026-11-29"),
    "default_job_11_27": partial(deployed, "default-job-11.8.1"),
    "default_job_pinned": pinned,
    "s0_s4": s0_s4,
}
