"""The host a measurement ran on, as the experiments record it beside their figures."""

from __future__ import annotations

import platform
from pathlib import Path
from typing import Any

from search_spaces import Context, host_cpu


def machine_info(ctx: Context, work_dir: Path) -> dict[str, Any]:
    """CPU model, cores, RAM, kernel and the trial disk's filesystem, for the record."""
    fs = ""
    try:
        best = ""
        for line in Path("/proc/mounts").read_text().splitlines():
            _dev, mount, kind, *_ = line.split()
            if str(work_dir.resolve()).startswith(mount) and len(mount) > len(best):
                best, fs = mount, kind
    except OSError:
        pass
    budget = {"memory_budget_bytes": ctx.budget} if ctx.budget else {}  # a study's; a bare host has none
    return {"cpu": host_cpu(), "cores": ctx.cores, "ram_bytes": ctx.ram, **budget,
            "kernel": platform.release(), "python": platform.python_version(), "work_dir_fs": fs}
