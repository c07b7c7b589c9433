"""Bad input ends with one clear line and exit code 2, before any model is loaded."""

import subprocess
import sys

import pytest

from .conftest import DATA

DOC = str(DATA / "harbour.txt")


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "extlib.cli", *args], capture_output=True, text=True, timeout=120)


@pytest.fixture
def files(tmp_path):
    (tmp_path / "empty.txt").write_text("  \n")
    (tmp_path / "binary.bin").write_bytes(b"\x7fELF\x00\x01\x02" * 50)
    (tmp_path / "latin1.txt").write_bytes("caf\xe9 au lait".encode("latin-1"))
    return tmp_path


@pytest.mark.parametrize("args, message", [
    (["--doc", "missing.txt", "--question", "q?"], "document not found"),
    (["--doc", "{tmp}/empty.txt", "--question", "q?"], "the document is empty"),
    (["--doc", "{tmp}/binary.bin", "--question", "q?"], "looks binary"),
    (["--doc", "{tmp}/latin1.txt", "--question", "q?"], "not valid UTF-8"),
    (["--doc", "{tmp}", "--question", "q?"], "not a regular file"),
    (["--doc", DOC, "--question", "   "], "the question is empty"),
    (["--doc", DOC, "--question", "q?", "--chunk-tokens", "8192"], "must be below context_window"),
    (["--doc", DOC, "--question", "q?", "--method", "magic"], "unknown method"),
    (["--doc", DOC, "--question", "q?", "--base-url", "http://127.0.0.1:9/v1"], "--model is required"),
    (["--doc", DOC, "--question", "q?", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"], "cannot reach"),
])
def test_bad_input_is_a_clear_error(files, args, message):
    result = cli("ask", *[a.replace("{tmp}", str(files)) for a in args])
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("flag, value", [("--chunk-tokens", "0"), ("--rounds", "-1"), ("--context-window", "8k"),
                                         ("--rating", "vibes"), ("--truncate", "end"), ("--lang", "fr"),
                                         ("--grounding", "1.5"), ("--overlap", "-3")])
def test_invalid_numbers_and_choices_are_rejected_by_the_parser(flag, value):
    result = cli("ask", "--doc", DOC, "--question", "q?", flag, value)
    assert result.returncode == 2
    assert flag in result.stderr and "Traceback" not in result.stderr
