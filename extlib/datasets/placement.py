"""Evidence passages placed at controlled depths inside long unrelated text, at an exact total length.

PARSER studies how the position, order and distance of evidence change long-document QA; this builds those
placements: the filler is cut to the remaining budget and each evidence passage goes in at the filler
paragraph boundary nearest its target depth.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from ..errors import UserError
from ..tokenizer import Tokenizer
from .packing import SEPARATOR, TooLong, pack

ORDERS = ("forward", "reverse")


def check_placement(position: float, distance: float, order: str) -> None:
    if not (0.0 <= position <= 1.0 and 0.0 <= distance <= 1.0 and position + distance <= 1.0):
        raise UserError(f"need 0 <= position, 0 <= distance and position + distance <= 1; got "
                        f"position={position}, distance={distance}")
    if order not in ORDERS:
        raise UserError(f"order must be one of {ORDERS}, got {order!r}")


@dataclass
class Placed:
    text: str
    offsets: list[int]  # token offset of each evidence passage, in the order given
    tokens: int


def place(evidence: list[str], depths: list[float], filler: list[str], filler_counts: np.ndarray,
          n_tokens: int, tokenizer: Tokenizer, start: int = 0) -> Placed:
    """`evidence[i]` starts near depth `depths[i]` (0 = first token, 1 = last) of an n_tokens document
    whose remaining tokens are filler paragraphs read from index `start` on (wrapping around)."""
    if len(evidence) != len(depths):
        raise ValueError("one depth per evidence passage")
    if any(not 0.0 <= d <= 1.0 for d in depths):
        raise ValueError(f"depths must lie in [0, 1], got {depths}")
    units = [e + SEPARATOR for e in evidence]
    unit_tokens = [len(tokenizer.encode(u)) for u in units]
    budget = n_tokens - sum(unit_tokens)
    if budget <= 0:
        raise TooLong(f"{n_tokens:,} tokens cannot hold the evidence alone ({sum(unit_tokens):,} tokens)", 0)
    order = np.roll(np.arange(len(filler)), -start)
    packed = pack(filler, filler_counts, order, budget, tokenizer, "the filler text")
    filler_units = packed.parts
    last_slot = len(filler_units) - (packed.cut is not None)  # nothing goes after the cut piece
    boundaries = np.array([*packed.offsets, packed.tokens])  # where a passage can go, in filler tokens
    slots = [min(int(np.argmin(np.abs(boundaries - depth * budget))), last_slot) for depth in depths]
    inserts: dict[int, list[int]] = {}
    for i in sorted(range(len(evidence)), key=lambda i: (slots[i], depths[i])):
        inserts.setdefault(slots[i], []).append(i)
    parts, offsets, position = [], [0] * len(evidence), 0
    for slot in range(len(filler_units) + 1):
        for i in inserts.get(slot, []):
            offsets[i] = position
            parts.append(units[i])
            position += unit_tokens[i]
        if slot < len(filler_units):
            parts.append(filler_units[slot])
            position += int(boundaries[slot + 1] - boundaries[slot])
    return Placed("".join(parts), offsets, position)


def place_apart(evidence: list[str], decoys: list[str], rng: random.Random, filler: list[str],
                filler_counts: np.ndarray, n_tokens: int, tokenizer: Tokenizer, min_gap_tokens: int,
                start: int = 0, without_first: bool = False, hops_only: bool = False) -> Placed:
    """Two evidence passages (the hops) and `decoys` at depths drawn from `rng` over the whole text, drawn again (from
    the same generator, so a seed fixes the book) until the hops are at least `min_gap_tokens` apart: with chunks of
    at most that many tokens they are read by different agents. Either hop may come first. `without_first`: the
    same draws, with filler where the first hop would be (its offset is then the filler's there). `hops_only`: the
    two hops alone, in the order the book has them, nothing else."""
    for _ in range(100):
        near = rng.uniform(0.0, 1.0 - min(min_gap_tokens / n_tokens, 0.95))
        far = rng.uniform(near + min(min_gap_tokens / n_tokens, 0.95), 1.0)
        depths = ([near, far] if rng.random() < 0.5 else [far, near]) + [rng.random() for _ in decoys]
        placed = place(evidence + decoys, depths, filler, filler_counts, n_tokens, tokenizer, start=start)
        if abs(placed.offsets[1] - placed.offsets[0]) >= min_gap_tokens:
            if hops_only:
                first, second = sorted(range(2), key=lambda k: placed.offsets[k])
                units = [evidence[first] + SEPARATOR, evidence[second] + SEPARATOR]
                counts = [len(tokenizer.encode(u)) for u in units]
                offsets = [0, 0]
                offsets[first], offsets[second] = 0, counts[0]
                return Placed("".join(units), offsets, sum(counts))
            if without_first:
                return place(["", *evidence[1:], *decoys], depths, filler, filler_counts, n_tokens, tokenizer,
                             start=start)
            return placed
    raise UserError(f"{n_tokens:,} tokens cannot hold the two hops {min_gap_tokens:,} tokens apart beside "
                    f"{len(decoys)} other passages; lower min_gap_tokens or the distractors")
