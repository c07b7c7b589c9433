"""The word tokenizer that retrieval, the grounding checks and the dataset builders share."""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+", re.UNICODE)
CJK = re.compile(r"[\u4e00-\u9fff]")
STOPWORDS = set("""the and was were for that this with which from who whom whose his her its their has have had are
been not none also there they she him them then than but into onto upon about after before over under
text states stated says said mentions mentioned according fact facts found information readers other""".split())


def terms(text: str) -> list[str]:
    """Lower-cased words; Chinese has no spaces, so each CJK character is a term of its own."""
    out = []
    for word in _WORD.findall(text.lower()):
        out.extend(list(word) if CJK.search(word) else [word])
    return out


def content_words(text: str) -> set[str]:
    """The terms minus short and function words (single CJK characters are kept)."""
    return {t for t in terms(text) if CJK.match(t) or (len(t) >= 3 and t not in STOPWORDS)}
