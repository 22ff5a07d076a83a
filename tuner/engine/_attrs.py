"""The engine's own study attributes (Optuna study user attributes), each read and written here by its
name and nowhere else: the starts and what the study said of them, its MLflow id, the options RocksDB did
not take, the re-validation's plan as decided and its rounds as measured. Records kept whole
(``preload``, ``startup``, ``fidelity_agreement``) go through :meth:`StudyStore.stored` and ``keep``;
the identity a resume must match is the storage's own (tuner.engine._storage)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Protocol

from tuner.stats import Rounds


class Attributes(Protocol):
    """What holds the attributes (a StudyStore)."""

    def attr(self, key: str, default: Any = None) -> Any: ...

    def set_attr(self, key: str, value: Any) -> None: ...


def uid(store: Attributes) -> str:
    """The study's id in MLflow, whatever its storage URL."""
    return str(store.attr("uid"))


@dataclass(frozen=True)
class Start:
    """A configuration the study runs first: its name (``rocksdb-default``, ``benchmark.sh``, an earlier
    study's ``study#trial``), its parameters, and whether it may be left out (another study's)."""

    name: str
    params: dict[str, Any]
    optional: bool = False


def starts(store: Attributes) -> list[Start]:
    """The configurations the study runs first, in order (tuner.engine._warmstart.named_starts)."""
    return [Start(s["name"], s["params"], bool(s.get("optional"))) for s in store.attr("starts") or []]


def set_starts(store: Attributes, queue: list[Start]) -> None:
    store.set_attr("starts", [asdict(s) for s in queue])


def seeded(store: Attributes) -> list[str]:
    """What the study said of its starts and warm start, a line each."""
    return list(store.attr("seeded") or [])


def set_seeded(store: Attributes, notes: list[str]) -> None:
    store.set_attr("seeded", notes)


def options_not_applied(store: Attributes) -> list[str]:
    """The searched options RocksDB did not take as asked, once a trial showed it."""
    return list(store.attr("options_not_applied") or [])


def set_options_not_applied(store: Attributes, options: list[str]) -> None:
    store.set_attr("options_not_applied", options)


@dataclass(frozen=True)
class SavedPlan:
    """The re-validation's plan as decided once (so that a resume goes on with the same configurations):
    its sizes, and without a --budget its allowance of machine time. A study from before ``k``,
    ``min_rounds`` or ``select_rounds`` were kept has them None."""

    ablation: bool
    k: int | None = None
    min_rounds: int | None = None
    select_rounds: int | None = None
    allowance: float | None = None


_PLAN = "revalidation:"  # each field its own attribute, revalidation:<field>, as every version stored them


def saved_plan(store: Attributes) -> SavedPlan | None:
    """The plan decided before this resume, None before one is."""
    ablation = store.attr(f"{_PLAN}ablation")
    if ablation is None:
        return None
    return SavedPlan(ablation, **{name: store.attr(f"{_PLAN}{name}")
                                  for name in ("k", "min_rounds", "select_rounds", "allowance")})


def allowance(store: Attributes) -> float | None:
    """The re-validation's machine time without a --budget, once decided."""
    value = store.attr(f"{_PLAN}allowance")
    return None if value is None else float(value)


def save_plan(store: Attributes, plan: SavedPlan) -> None:
    for name in ("allowance", "ablation", "k", "min_rounds", "select_rounds"):
        value = getattr(plan, name)
        if value is not None:
            store.set_attr(f"{_PLAN}{name}", value)


def rounds(store: Attributes, attr: str) -> Rounds | None:
    """The interleaved rounds saved as ``attr`` (``revalidation:<stage>``, an experiment's head-to-head)."""
    value = store.attr(attr)
    return None if value is None else Rounds.from_dict(value, attr)


def keep_rounds(store: Attributes, attr: str, saved: Rounds) -> None:
    store.set_attr(attr, saved.to_dict())
