"""How figures are printed, the same everywhere: ops/s with thousands separators, durations."""

from __future__ import annotations


def fmt_ops(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def fmt_duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
