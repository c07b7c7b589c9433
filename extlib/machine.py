"""The machine a time was measured on: times are only comparable side by side on one CPU, so every reported
time names it."""

from __future__ import annotations

import os
import platform
from pathlib import Path


def cpu_name() -> str:
    """The CPU's model name, family and core count, e.g. 'AMD EPYC (family 25), 2 cores'. On Linux
    platform.processor() is empty, so /proc/cpuinfo is read where it exists."""
    info: dict[str, str] = {}
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines()[:30]:
            key, _, value = line.partition(":")
            info.setdefault(key.strip(), value.strip())
    name = info.get("model name") or platform.processor() or platform.machine() or "unknown CPU"
    family = f" (family {info['cpu family']})" if "cpu family" in info else ""
    return f"{name}{family}, {os.cpu_count()} cores"
