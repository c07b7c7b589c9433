"""Answer metrics with exactly the official scripts' rules, and scoring of prediction rows by task id.

- HotpotQA (`hotpot_evaluate_v1.py`): normalize = lower, drop ASCII punctuation, remove a/an/the, collapse
  whitespace; F1 over whitespace tokens with multiset overlap; if either side normalizes to yes/no/noanswer
  and they differ, F1 is 0; EM compares the normalized strings.
- InfiniteBench En.QA (`compute_scores.py`): the same normalization and F1 without the yes/no rule, max over
  the gold answers.
- InfiniteBench Zh.QA: lower, drop ASCII and Chinese punctuation, remove all whitespace; tokens are single
  characters; max over the gold answers.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable, Mapping

from .errors import UserError

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_ASCII_PUNCT = set(string.punctuation)
_ZH_PUNCT = _ASCII_PUNCT | set(
    "！？｡。＂＃＄％＆＇（）＊＋，－／：；＜＝＞＠［＼］＾＿｀｛｜｝～｟｠｢｣､、〃》「」『』【】〔〕〖〗〘〙〚〛〜〝〞〟〰〾〿–—‘’‛“”„‟…‧﹏.")


def normalize_answer(text: str) -> str:
    text = "".join(ch for ch in text.lower() if ch not in _ASCII_PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def normalize_zh_answer(text: str) -> str:
    return "".join("".join(ch for ch in text.lower() if ch not in _ZH_PUNCT).split())


def _f1(prediction: list[str], gold: list[str]) -> float:
    same = sum((Counter(prediction) & Counter(gold)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(prediction), same / len(gold)
    return 2 * precision * recall / (precision + recall)


def hotpot_f1(prediction: str, gold: str) -> float:
    pred, truth = normalize_answer(prediction), normalize_answer(gold)
    if (pred in ("yes", "no", "noanswer") or truth in ("yes", "no", "noanswer")) and pred != truth:
        return 0.0
    return _f1(pred.split(), truth.split())


def hotpot_em(prediction: str, gold: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(gold))


def en_qa_f1(prediction: str, golds: Iterable[str]) -> float:
    return max((_f1(normalize_answer(prediction).split(), normalize_answer(g).split()) for g in golds), default=0.0)


def zh_qa_f1(prediction: str, golds: Iterable[str]) -> float:
    return max((_f1(list(normalize_zh_answer(prediction)), list(normalize_zh_answer(g))) for g in golds),
               default=0.0)


METRICS = ("hotpotqa", "en", "zh")


def score(prediction: str, golds: list[str], metric: str) -> dict[str, float]:
    """F1 (and EM) of one answer against its gold answers, max over golds, by the named official rules."""
    if metric not in METRICS:
        raise UserError(f"unknown metric {metric!r}; choose one of {METRICS}")
    if not golds:
        raise UserError("no gold answers to score against")
    if metric == "hotpotqa":
        return {"f1": max(hotpot_f1(prediction, g) for g in golds),
                "em": max(hotpot_em(prediction, g) for g in golds)}
    if metric == "en":
        return {"f1": en_qa_f1(prediction, golds), "em": max(hotpot_em(prediction, g) for g in golds)}
    return {"f1": zh_qa_f1(prediction, golds),
            "em": float(any(normalize_zh_answer(prediction) == normalize_zh_answer(g) for g in golds))}


def score_rows(predictions: Mapping[str, str | None], golds: Mapping[str, list[str]], metric: str) -> dict:
    """Scores matched by task id, never by position. A task without a prediction (or with None, a failed
    question) scores 0 and is counted as missing; a prediction for an unknown id is an error."""
    unknown = set(predictions) - set(golds)
    if unknown:
        raise UserError(f"{len(unknown)} prediction(s) for ids not in the gold set, e.g. {sorted(unknown)[:3]}")
    rows = {}
    for task_id, answers in golds.items():
        prediction = predictions.get(task_id)
        rows[task_id] = score(prediction, answers, metric) if prediction is not None else {"f1": 0.0, "em": 0.0}
    missing = sum(predictions.get(task_id) is None for task_id in golds)
    n = len(rows)
    return {"n": n, "missing": missing,
            "f1": sum(r["f1"] for r in rows.values()) / n if n else 0.0,
            "em": sum(r["em"] for r in rows.values()) / n if n else 0.0,
            "rows": rows}
