import os
from pathlib import Path

from extlib.machine import cpu_name


def test_cpu_name_names_the_model_family_and_cores():
    name = cpu_name()
    assert name.endswith(f", {os.cpu_count()} cores")
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists() and "cpu family" in cpuinfo.read_text():
        model = next(line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines()
                     if line.startswith("model name"))
        assert name.startswith(f"{model} (family ")
