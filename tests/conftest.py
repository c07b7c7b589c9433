from pathlib import Path

import pytest

from extlib import LocalServer

DATA = Path(__file__).parent / "data"
TEST_MODEL = "qwen2.5-0.5b"  # the fastest bundled model that still reads and answers reliably
TEST_WINDOW = 4096


@pytest.fixture(scope="session")
def local_server():
    """One real llama.cpp server for the whole session (installed by `make test`, never skipped)."""
    with LocalServer(TEST_MODEL, context_window=TEST_WINDOW) as server:
        yield server


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    """Response cache and server records in a temp dir; models stay in the shared user cache."""
    from extlib import models

    shared = models.cache_dir()
    monkeypatch.setenv("EXTAGENTS_CACHE", str(tmp_path / "cache"))
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "models").symlink_to(shared / "models", target_is_directory=True)
    yield
