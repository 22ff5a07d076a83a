"""How figures are printed, the same everywhere: ops/s with thousands separators, other metrics, durations."""

from __future__ import annotations


def fmt_ops(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def fmt_value(value: float | None) -> str:
    """Any metric: ``338,012`` from 1,000 up, else three significant digits (``41.3``, ``0.25``)."""
    return "-" if value is None else fmt_ops(value) if abs(value) >= 1000 else f"{value:.3g}"


def fmt_duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def fmt_resolution(counted: str, unit: str, ratio: float, smallest: float, needed: int | None, most: int) -> str:
    """What a tie's rounds (or seeds) could tell, in words (``tuner.stats.resolution``): ``counted`` names them
    (``3 paired rounds``), ``unit`` more of them (``rounds``)."""
    need = (f"an estimate of {ratio:.2f}x would need about {needed} {unit} of this spread to tell" if needed
            else f"an estimate of {ratio:.2f}x could not be told from 1 in {most} {unit} of this spread")
    return f"{counted} of this spread tell apart only differences of {smallest:.2f}x or more; {need}"


def fmt_seconds(seconds: float) -> str:
    """A run's length: ``0.4 s``, ``6.2 s``, ``31 s``."""
    return f"{seconds:.1f} s" if seconds < 10 else f"{seconds:.0f} s"


def fmt_bytes(value: float | None) -> str:
    """``2.0 GiB``, ``512 MiB``, ``900 KiB``: binary units, as the size flags take them."""
    if value is None:
        return "-"
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(value) >= size:
            shown = value / size
            return f"{shown:,.1f} {unit}" if shown < 10 else f"{shown:,.0f} {unit}"
    return f"{value:,.0f} B"


def fmt_cost(key: str, value: float) -> str:
    """A cost metric's value as the cost lines give it: bytes in binary units, stall time in seconds, a ratio."""
    if key in ("db_size_bytes", "sst_bytes", "memory_peak_bytes"):
        return fmt_bytes(value)
    return f"{value / 1e6:.2f} s" if key == "stall_micros" else f"{value:.2f}"


# A run at a rate's figures, as a line names them: metric -> (its words, how its value reads).
_AT_RATE = (("delivered", "delivered", lambda v: f"{v:.1%}"), ("p99.9_us", "P99.9", lambda v: f"{v / 1e3:,.1f} ms"),
            ("p99.99_us", "P99.99", lambda v: f"{v / 1e3:,.1f} ms"), ("max_us", "max", lambda v: f"{v / 1e3:,.1f} ms"),
            ("stall_micros", "stalls", lambda v: f"{v / 1e6:.2f} s"), ("write_amp", "write amp", lambda v: f"{v:.2f}"))


AT_RATE_METRICS = tuple(key for key, _, _ in _AT_RATE)


def fmt_at_rate(metrics: dict[str, float | None]) -> str:
    """A run at a rate (or the medians of several) in a few words: what was delivered, the tail, the
    stalls, the write amplification; those ``metrics`` has."""
    return ", ".join(f"{words} {fmt(value)}" for key, words, fmt in _AT_RATE
                     if (value := metrics.get(key)) is not None) or "no figures"
