"""Reading a user's document: a UTF-8 text file or stdin, with a clear error for anything else; and the error for
any file a user named that is not there."""

from __future__ import annotations

import sys
from pathlib import Path

from .errors import MissingFile, UserError


class DocumentError(UserError):
    """A document that cannot be read as text; the message says how to fix it."""


def read_document(path: str) -> str:
    """The document as text: `-` reads stdin. Rejects missing, empty, binary and non-UTF-8 input."""
    if path == "-":
        data = sys.stdin.buffer.read()
        where = "stdin"
    else:
        file = Path(path)
        if not file.exists():
            raise MissingFile(f"document not found: {path}")
        if not file.is_file():
            raise DocumentError(f"not a regular file: {path}")
        try:
            data = file.read_bytes()
        except OSError as exc:  # no read permission, say
            raise DocumentError(f"cannot read {path}: {exc.strerror}") from exc
        where = path
    if not data.strip():
        raise DocumentError(f"the document is empty: {where}")
    if b"\x00" in data[:1 << 20]:
        raise DocumentError(f"{where} looks binary (it contains NUL bytes); give a plain UTF-8 text file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DocumentError(f"{where} is not valid UTF-8 (byte {exc.start}); convert it first, e.g. "
                            f"`iconv -f latin1 -t utf-8 {where} > doc.txt`") from exc
