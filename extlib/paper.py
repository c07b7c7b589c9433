"""The numbers the ExtAgents paper reports, for drawing as labelled reference marks where a setting matches.

Only what the paper's text states is here: Table 3 gives each method's F1 at the input length where it did best
(the per-length curves of Figures 1, 4 and 5 are images without numbers), Table 5 the latency study, Table 8
the cost per question (input length not stated), Table 4 the survey metrics. The paper reports the median of
three runs; its context window is 128k tokens, so a length is drawn at length / 128k on a ×window axis.
Columns the text extraction leaves ambiguous are marked in comments.
"""

from __future__ import annotations

PAPER_WINDOW = 128_000

# Table 3, F1 (gpt-4o-mini-2024-07-18, temperature 0): method -> dataset -> (input tokens, F1). DRAG/IterDRAG
# are HotpotQA-only and LLM×MapReduce En/Zh-only (the columns are placed by the captions of Figure 5).
TABLE3_GPT4O_MINI: dict[str, dict[str, tuple[int, float]]] = {
    "direct": {"hotpotqa": (128_000, 0.204), "en": (128_000, 0.182), "zh": (128_000, 0.204)},
    "drag": {"hotpotqa": (128_000, 0.482)},
    "iterdrag": {"hotpotqa": (128_000, 0.413)},
    "mapreduce": {"en": (128_000, 0.374), "zh": (128_000, 0.436)},
    "extagents": {"hotpotqa": (1_024_000, 0.534), "en": (1_024_000, 0.382), "zh": (1_024_000, 0.482)},
}

# Table 5: latency per HotpotQA question, 128k tokens of knowledge, Llama-3.1-8B-Instruct on 4 A100 GPUs
# (method, parallel processes, seconds, measured or estimated).
TABLE5_LATENCY: list[tuple[str, int, float, str]] = [
    ("direct", 1, 17.80, "measured"), ("extagents", 1, 19.08, "measured"), ("extagents", 4, 4.94, "measured"),
    ("extagents", 16, 1.41, "estimated"),
]

# Table 8: dollars per question with gpt-4o-mini at $0.15 / $0.60 per 1M input / output tokens.
TABLE8_COST: dict[str, dict[str, float]] = {
    "drag": {"hotpotqa": 0.019}, "iterdrag": {"hotpotqa": 0.048},
    "mapreduce": {"en": 0.022, "zh": 0.021},
    "extagents": {"hotpotqa": 0.021, "en": 0.025, "zh": 0.029},
}
PRICES_GPT4O_MINI = {"input": 0.15, "output": 0.60}  # dollars per 1M tokens

# Table 4: long survey generation with gpt-4o-mini (judge: gpt-4.1-mini; duplication rate's unit not stated).
TABLE4_SURVEY = {
    "autosurvey": {"judge_score": 6.75, "citations": 113, "citation_density": 1.00, "duplication_rate": 2.41},
    "extagents": {"judge_score": 7.63, "citations": 191, "citation_density": 1.09, "duplication_rate": 1.80},
}

# Which of our datasets a paper column stands for: HotpotQA is the same task (a smaller retrieval pool here);
# En.QA / Zh.QA are long books, like hotpotqa-longdoc / zh-longdoc only in kind.
PAPER_COLUMN = {"hotpotqa": "hotpotqa", "infinitebench-en": "en", "infinitebench-zh": "zh"}


def reference_points(dataset: str) -> list[tuple[str, float, float]]:
    """(method, input length / window, F1) that Table 3 reports for our `dataset`, or [] when no paper setting
    matches it."""
    column = PAPER_COLUMN.get(dataset)
    return [(method, length / PAPER_WINDOW, f1) for method, cells in TABLE3_GPT4O_MINI.items()
            for col, (length, f1) in cells.items() if col == column]
