"""The S0-S4 table docs/results.md quotes, made from the studies' result.json by `make record`
(experiments/record.py): per study its sweep's machine time (the tuner's budget), the tuner's trials per
seed, and the tuned, hand-found and default configurations against each other (the tuned ratios the
geometric mean over seeds with a t interval over seeds, the hand-found one paired over the head-to-head's
rounds)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from experiments.record import stamp
from tuner.summary import Ratio

RESULTS = Path(__file__).with_name("results")
STUDIES = ("S0", "S1", "S2", "S3", "S4")
CODE = ("experiments/studies/runner.py",)  # the sweep, the tuner's seeds and the head-to-head


def _ratio(compared: dict[str, Any]) -> str:
    """``1.25x (1.15-1.36)``, and `` tie`` when its interval holds 1."""
    r = Ratio.from_dict(compared)
    assert r.ci95 is not None
    return f"{r.ratio:.2f}x ({r.ci95[0]:.2f}-{r.ci95[1]:.2f})" + (" tie" if r.ci95[0] <= 1 <= r.ci95[1] else "")


def row(result: dict[str, Any]) -> str:
    """A study's row: its id and title, sweep machine time, trials per seed, tuned / hand-found, tuned /
    default, hand-found / default."""
    seeds = result["tuner"]["across_seeds"]
    (hand,) = (c for c in result["head_to_head"]["configurations"] if c["name"] == result["hand_found"])
    cells = [f"{result['id']} {result['title']}", f"{result['sweep']['machine_seconds']['total']:.0f} s",
             "/".join(str(s["runs"]) for s in result["tuner"]["seeds"]), _ratio(seeds["vs_hand_found"]),
             _ratio(seeds["vs_default"]), _ratio(hand["vs_default"])]
    return "| " + " | ".join(cells) + " |"


def table(rerun: str = "") -> str:
    """The five studies' rows (``rerun``: the folder of a re-run set under each study's, e.g. ``rerun-10.4.2``)."""
    paths = [RESULTS / name / rerun / "result.json" for name in STUDIES]
    results = [json.loads(p.read_text()) for p in paths]
    rows = ["| study | sweep machine time | tuner trials per seed | tuned / hand-found | tuned / default | "
            "hand-found / default |", "|---|---|---|---|---|---|", *(row(r) for r in results)]
    started = datetime.fromtimestamp(min(r["started"] for r in results), UTC).isoformat()
    return "\n".join([*rows, "", stamp(RESULTS / "S*" / rerun / "result.json", None, started, CODE)])


TABLES = {"s0_s4": table, "s0_s4_10_4_2": partial(table, "rerun-10.4.2")}
