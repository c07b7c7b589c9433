"""conda users get what `make` installs: environment.yml and the Makefile name the same extras as pyproject."""

import re
import sys
from pathlib import Path

import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def test_environment_yml_installs_this_project_with_every_extra_make_installs():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = set(project["optional-dependencies"]) - {"vllm"}  # vllm: GPU machines only, never installed by make
    assert "vllm" in project["optional-dependencies"]  # `pip install -e '.[vllm]'` (docs/vllm.md)
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    [pip] = [d["pip"] for d in env["dependencies"] if isinstance(d, dict)]
    [install] = pip
    named = re.fullmatch(r"-e \.\[([a-z,]+)\]", install)
    assert named and set(named.group(1).split(",")) == extras
    python = next(d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python"))
    assert python == "python" + project["requires-python"]
    make = re.search(r"pip install .*-e '\.\[([a-z,]+)\]'", (ROOT / "Makefile").read_text())
    assert make and set(make.group(1).split(",")) == extras  # the same extras as `make`
