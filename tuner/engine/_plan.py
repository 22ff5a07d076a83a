"""What a re-validation does (tuner.engine._revalidation): its plan, and the reference it measures
gains against."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from objectives.contract import Task
from objectives.flags import Flag
from tuner.model import RevalidationConfig


@dataclass(frozen=True)
class Plan:
    """How much re-validation: finalists, rounds, the interval to reach, whether to ablate."""

    k: int = 3
    select_rounds: int = 3
    min_rounds: int = 5
    max_rounds: int = 10
    target: float = 0.10  # an interval's high / low - 1
    ablation: bool = True
    seed: int = 0
    workload: Task | None = None  # --confirm-scale: the workload at that scale
    confirm_scale: float | None = None

    @classmethod
    def of(cls, revalidation: RevalidationConfig, seed: int, workload: Task | None) -> Plan:
        """The plan a study's re-validation part asks for; ``workload``: where it confirms, if not the trials'."""
        return cls(k=revalidation.revalidate, min_rounds=revalidation.revalidate_rounds,
                   max_rounds=revalidation.revalidate_max_rounds, target=revalidation.interval_target,
                   ablation=revalidation.ablation, seed=seed, workload=workload,
                   confirm_scale=revalidation.confirm_scale)


@dataclass(frozen=True)
class Reference:
    """What the gain is measured against: its name (a baseline of the study), its flags, and its value
    of each tuned parameter where known (None: db_bench's default, i.e. the flag is not passed)."""

    name: str
    flags: dict[str, Flag]
    values: dict[str, Any] = field(default_factory=dict)
