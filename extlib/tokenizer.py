"""Token counting with the serving model's own tokenizer (tiktoken's files download at first use).

Any object with `encode(str) -> list[int]` and `decode_bytes(list[int]) -> bytes` works; `decode_bytes`
returns bytes so chunk boundaries that split a multi-byte character can be stitched (see chunking).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from .errors import MissingFile, UserError


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    sys.stderr.flush()
    saved = os.dup(2)
    with open(os.devnull, "w") as devnull, contextlib.redirect_stderr(devnull):  # C and Python writers alike
        os.dup2(devnull.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


class Tokenizer(Protocol):
    name: str

    def encode(self, text: str) -> list[int]: ...

    def decode_bytes(self, ids: list[int]) -> bytes: ...


class GGUFTokenizer:
    """The vocabulary of a GGUF file, loaded alone by llama.cpp (no weights, ~0.2 s)."""

    def __init__(self, path: str | Path) -> None:
        import llama_cpp
        from llama_cpp import Llama

        self.name = f"gguf:{Path(path).name}"
        with _quiet_stderr():  # llama.cpp warns about a context it never creates for a vocab-only load
            self._llama = Llama(model_path=str(path), vocab_only=True, verbose=False)

        self._vocab = self._llama._model.vocab
        self._lib = llama_cpp

    # llama.cpp's C functions with buffers sized to the input: the Python wrappers allocate a
    # 32k-token buffer per call (0.5 ms for a 10-token message) and detokenize one token at a time.
    def encode(self, text: str) -> list[int]:
        data = text.encode("utf-8")
        size = len(data) + 8  # at most one token per byte
        buffer = (self._lib.llama_token * size)()
        n = self._lib.llama_tokenize(self._vocab, data, len(data), buffer, size, False, False)
        if n < 0:
            raise RuntimeError(f"llama.cpp could not tokenize a {len(data)}-byte text ({n})")
        return buffer[:n]

    def decode_bytes(self, ids: list[int]) -> bytes:
        if not ids:
            return b""
        tokens = (self._lib.llama_token * len(ids))(*ids)
        size = 16 * len(ids) + 16
        for _ in range(2):
            buffer = ctypes.create_string_buffer(size)
            n = self._lib.llama_detokenize(self._vocab, tokens, len(ids), buffer, size, False, False)
            if n >= 0:
                return buffer.raw[:n]
            size = -n
        raise RuntimeError(f"llama.cpp could not detokenize {len(ids)} tokens")


class HFTokenizer:
    """A `tokenizer.json` file (every model directory a vLLM server loads has one)."""

    def __init__(self, path: str | Path) -> None:
        from tokenizers import Tokenizer as _Tokenizer

        self.name = f"hf:{path}"
        self._tok = _Tokenizer.from_file(str(path))
        decoder = json.dumps(json.loads(Path(path).read_text(encoding="utf-8")).get("decoder"))
        # Byte-level BPE (GPT-2, Qwen, Llama 3) spells bytes as printable characters; mapping them back gives
        # exact bytes even for a token that holds part of a character, which str decoding would garble.
        self._bytes = {c: b for b, c in _byte_alphabet().items()} if "ByteLevel" in decoder else None

    def encode(self, text: str) -> list[int]:
        return self._tok.encode(text, add_special_tokens=False).ids

    def decode_bytes(self, ids: list[int]) -> bytes:
        if self._bytes is None:
            return self._tok.decode(list(ids), skip_special_tokens=False).encode("utf-8")
        out = bytearray()
        for token in (self._tok.id_to_token(i) or "" for i in ids):
            if all(c in self._bytes for c in token):
                out.extend(self._bytes[c] for c in token)
            else:  # a special token such as <|im_end|>
                out.extend(token.encode("utf-8"))
        return bytes(out)


def _byte_alphabet() -> dict[int, str]:
    """GPT-2's reversible map from the 256 byte values to printable characters."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    mapping = {b: chr(b) for b in printable}
    for b in range(256):
        if b not in mapping:
            mapping[b] = chr(256 + len(mapping) - len(printable))
    return mapping


class TiktokenTokenizer:
    """An OpenAI encoding; works offline only once tiktoken has cached its files."""

    def __init__(self, encoding: str) -> None:
        import tiktoken

        self.name = f"tiktoken:{encoding}"
        self._enc = tiktoken.get_encoding(encoding)

    def encode(self, text: str) -> list[int]:
        return self._enc.encode(text, disallowed_special=())

    def decode_bytes(self, ids: list[int]) -> bytes:
        return self._enc.decode_bytes(list(ids))


def load_tokenizer(spec: str) -> Tokenizer:
    """`gguf:PATH`, `hf:PATH/tokenizer.json` or `tiktoken:ENCODING`."""
    kind, _, arg = spec.partition(":")
    if not arg:
        raise UserError(f"tokenizer {spec!r}: use gguf:PATH, hf:PATH/tokenizer.json or tiktoken:ENCODING")
    if kind in ("gguf", "hf"):
        if not Path(arg).is_file():
            raise MissingFile(f"tokenizer file not found: {arg}")
        try:
            return GGUFTokenizer(arg) if kind == "gguf" else HFTokenizer(arg)
        except Exception as exc:  # llama.cpp raises ValueError, tokenizers a plain Exception, for a bad file
            raise UserError(f"tokenizer file {arg} could not be loaded ({exc}); give a GGUF model (gguf:) or a "
                            "tokenizer.json (hf:)") from exc
    if kind == "tiktoken":
        try:
            return TiktokenTokenizer(arg)
        except Exception as exc:  # tiktoken raises plain Exceptions for a failed download
            raise UserError(f"tiktoken encoding {arg!r} unavailable ({exc}); offline, pass the serving "
                            "model's tokenizer with --tokenizer hf:PATH/tokenizer.json") from exc
    raise UserError(f"unknown tokenizer kind {kind!r} in {spec!r}; use gguf:, hf: or tiktoken:")
