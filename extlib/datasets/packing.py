"""Knowledge of exactly N tokens: passages taken in a given order (best first) until N is reached, the last
one cut at a token boundary; and documents cut to N tokens.

Each passage is counted together with the blank line that follows it: byte-level BPE vocabularies merge a
final "." with the newlines (".\\n\\n" is one Qwen token), so the sum of passage counts alone would overshoot.
After a blank line every passage starts a fresh pre-token, so these unit counts add up exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..chunking import decode_span, encode_long, truncate_ids
from ..errors import UserError
from ..fan_out import progress_bar
from ..tokenizer import Tokenizer

SEPARATOR = "\n\n"


class TooLong(UserError):
    """The requested input length is more than the knowledge that exists."""

    def __init__(self, message: str, available: int) -> None:
        super().__init__(message)
        self.available = available


@dataclass
class Packed:
    parts: list[str]  # each placed passage with its blank line; a cut last one may lack it
    passage_ids: list[int]  # in the order placed
    offsets: list[int]  # token offset at which each placed passage starts
    tokens: int
    cut: int | None  # the passage id that was cut to fit, if any

    @property
    def text(self) -> str:
        return "".join(self.parts)


def unit_counts(tokenizer: Tokenizer, passages: list[str], progress: bool = False) -> np.ndarray:
    return np.fromiter((len(tokenizer.encode(p + SEPARATOR)) for p in progress_bar(
        progress, iterable=passages, desc=f"count tokens ({tokenizer.name})", unit="passage")),
        dtype=np.int32, count=len(passages))


def cut_text(tokenizer: Tokenizer, text: str, n_tokens: int) -> str:
    """The longest prefix of `text` that encodes to at most n_tokens (exactly n_tokens unless a character
    spans the cut: then up to 3 fewer)."""
    ids = tokenizer.encode(text)
    if len(ids) <= n_tokens:
        return text
    for keep in range(n_tokens, max(n_tokens - 4, 0), -1):
        prefix = tokenizer.decode_bytes(ids[:keep]).decode("utf-8", errors="ignore")
        if len(tokenizer.encode(prefix)) <= n_tokens:
            return prefix
    return ""


def pack(passages: list[str], counts: np.ndarray, order: np.ndarray, n_tokens: int, tokenizer: Tokenizer,
         what: str = "passages") -> Packed:
    """Passages in `order` until n_tokens; raises TooLong (naming the maximum) if they do not reach it."""
    ordered = counts[order].astype(np.int64)
    ends = np.cumsum(ordered)
    available = int(ends[-1]) if len(ends) else 0
    if n_tokens > available:
        raise TooLong(f"{n_tokens:,} tokens requested but the {what} hold {available:,}; ask for at most that",
                      available)
    full = int(np.searchsorted(ends, n_tokens, side="right"))  # passages that fit whole
    used = int(ends[full - 1]) if full else 0
    ids = [int(i) for i in order[:full]]
    parts = [passages[i] + SEPARATOR for i in ids]
    offsets = [0, *(int(e) for e in ends[:full - 1])] if full else []
    cut = None
    if used < n_tokens:
        cut = int(order[full])
        parts.append(cut_text(tokenizer, passages[cut] + SEPARATOR, n_tokens - used))
        ids.append(cut)
        offsets.append(used)
        used += len(tokenizer.encode(parts[-1]))
    return Packed(parts, ids, offsets, used, cut)


def cut_document(tokenizer: Tokenizer, text: str, n_tokens: int, side: str) -> tuple[str, int]:
    """The document cut to n_tokens (`middle` keeps both ends, InfiniteBench's convention); with its length."""
    ids = encode_long(tokenizer, text)
    if n_tokens > len(ids):
        raise TooLong(f"{n_tokens:,} tokens requested but the document has {len(ids):,}", len(ids))
    kept = truncate_ids(ids, n_tokens, side, tokenizer)  # cuts snapped to character starts
    return decode_span(tokenizer, kept, 0, len(kept)), len(kept)
