"""Truncation to an input length and chunking into agent-sized pieces, all in the serving model's tokens.

Long inputs are tokenized in blocks into a compact int32 array (4 bytes a token), so a 10M-token book
needs about as much memory again as its text, not a Python list of ints (~36 bytes a token).
"""

from __future__ import annotations

import re
from array import array
from typing import Any

from .errors import UserError
from .tokenizer import Tokenizer

TRUNCATE_SIDES = ("front", "middle")
_BLOCK_CHARS = 100_000


def encode_long(tokenizer: Tokenizer, text: str) -> array:
    """Token ids of `text`, encoded block by block at line breaks so no token straddles two blocks."""
    ids = array("i")
    pos = 0
    while pos < len(text):
        end = min(pos + _BLOCK_CHARS, len(text))
        if end < len(text):
            cut = max(text.rfind("\n", pos, end), text.rfind(" ", pos, end))
            end = cut + 1 if cut > pos else end
        ids.extend(tokenizer.encode(text[pos:end]))
        pos = end
    return ids


def truncate_ids(ids: array, max_tokens: int, side: str = "middle", tokenizer: Tokenizer | None = None) -> array:
    """`front` keeps the first max_tokens (retrieval order: best first); `middle` keeps the first and
    last halves and cuts the middle (InfiniteBench's convention for books). Given the tokenizer, cuts move
    (by at most 3 tokens, keeping fewer) off the inside of a character split across tokens."""
    if side not in TRUNCATE_SIDES:
        raise UserError(f"truncate side must be one of {TRUNCATE_SIDES}, got {side!r}")
    if max_tokens <= 0:
        raise UserError(f"input length must be positive, got {max_tokens}")
    if len(ids) <= max_tokens:
        return ids

    def starts_char(pos: int) -> bool:
        data = tokenizer.decode_bytes([ids[pos]]) if tokenizer and 0 < pos < len(ids) else b""
        return not data or (data[0] & 0xC0) != 0x80

    head = max_tokens if side == "front" else max_tokens // 2
    for _ in range(3):
        head -= 0 if starts_char(head) else 1
    if side == "front":
        return ids[:head]
    tail = len(ids) - (max_tokens - max_tokens // 2)
    for _ in range(3):
        tail += 0 if starts_char(tail) else 1
    return ids[:head] + ids[tail:]


def evidence_kept(meta: dict[str, Any], keep: int, side: str) -> float:
    """Share of a question's gold evidence that `truncate_ids` to `keep` tokens keeps: the first `keep` tokens
    (`front`, retrieval order) or the first and last halves (`middle`). Evidence beyond the knowledge (a
    retrieved paragraph ranked too low to be packed) counts as outside."""
    gold, total = meta.get("gold", []), meta["input_tokens"]
    if not gold:
        return float("nan")

    def kept(offset: int | None) -> bool:
        if offset is None:
            return False
        return offset < keep if side == "front" else offset < keep // 2 or offset >= total - (keep - keep // 2)
    return sum(kept(g.get("token_offset")) for g in gold) / len(gold)


def _utf8_length(lead: int) -> int:
    if lead >= 0xF0:
        return 4
    if lead >= 0xE0:
        return 3
    return 2 if lead >= 0xC0 else 1


def decode_span(tokenizer: Tokenizer, ids: array, start: int, end: int) -> str:
    """Text of ids[start:end]. A character whose bytes straddle the boundary belongs to the span where it
    starts, so consecutive spans decode to the whole text with nothing lost or doubled (byte-level BPE
    splits Chinese characters across tokens)."""
    data = tokenizer.decode_bytes(ids[start:end].tolist())
    skip = 0
    while skip < min(len(data), 3) and start > 0 and (data[skip] & 0xC0) == 0x80:
        skip += 1
    data = data[skip:]
    for back in range(1, min(4, len(data)) + 1):  # an incomplete last character: borrow its rest
        lead = data[-back]
        if (lead & 0xC0) != 0x80:
            missing = _utf8_length(lead) - back
            if missing > 0 and end < len(ids):
                data += tokenizer.decode_bytes(ids[end:end + 4].tolist())[:missing]
            break
    return data.decode("utf-8", errors="replace")


def fixed_chunks(tokenizer: Tokenizer, ids: array, chunk_tokens: int, overlap: int = 0) -> list[str]:
    """The paper's chunking: consecutive pieces of chunk_tokens tokens (the last may be shorter)."""
    if chunk_tokens <= 0:
        raise UserError(f"chunk_tokens must be positive, got {chunk_tokens}")
    if not 0 <= overlap < chunk_tokens:
        raise UserError(f"overlap must be in [0, chunk_tokens), got {overlap}")
    step = chunk_tokens - overlap
    starts = range(0, max(len(ids) - overlap, 1), step)
    return [decode_span(tokenizer, ids, s, min(s + chunk_tokens, len(ids))) for s in starts if s < len(ids)]


def paragraph_chunks(tokenizer: Tokenizer, text: str, chunk_tokens: int) -> list[str]:
    """Whole paragraphs packed greedily up to chunk_tokens; a paragraph longer than that is split."""
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for paragraph in re.split(r"(?<=\n)\s*\n", text):
        if not paragraph.strip():
            continue
        n = len(tokenizer.encode(paragraph))
        if n > chunk_tokens:
            if current:
                chunks.append("\n".join(current))
                current, size = [], 0
            chunks.extend(fixed_chunks(tokenizer, encode_long(tokenizer, paragraph), chunk_tokens))
            continue
        if size + n > chunk_tokens and current:
            chunks.append("\n".join(current))
            current, size = [], 0
        current.append(paragraph.rstrip("\n"))
        size += n + 1
    if current:
        chunks.append("\n".join(current))
    return chunks


def chunk_text(text: str, tokenizer: Tokenizer, chunk_tokens: int, input_tokens: int | None = None,
               truncate: str = "middle", paragraphs: bool = False, overlap: int = 0) -> list[str]:
    """Truncate `text` to input_tokens (if given), then split it into chunks of at most chunk_tokens."""
    ids = encode_long(tokenizer, text)
    if input_tokens is not None:
        ids = truncate_ids(ids, input_tokens, truncate, tokenizer)
    if paragraphs:
        if overlap:
            raise UserError("overlap applies to fixed-size chunks only; drop --overlap or --paragraphs")
        return paragraph_chunks(tokenizer, decode_span(tokenizer, ids, 0, len(ids)), chunk_tokens)
    return fixed_chunks(tokenizer, ids, chunk_tokens, overlap)


def truncate_text(text: str, tokenizer: Tokenizer, max_tokens: int, side: str = "middle") -> str:
    ids = truncate_ids(encode_long(tokenizer, text), max_tokens, side, tokenizer)
    return decode_span(tokenizer, ids, 0, len(ids))
