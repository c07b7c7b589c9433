"""Prompt sets. `paper` is the paper's Appendix E.3 verbatim (HotpotQA / En / Zh); `small` is tuned for
the bundled 1.5B model, on which the paper's wording made seeking agents answer tersely instead of
extracting and the reasoning agent answer two-hop questions with the bridge entity.

Fields: {chunk} {question} {messages} {round} ("2nd") {round_number} ("2") {leads} (the names the messages add to
the question's, or `no_leads`) (seeking),
{message} (rating), {messages} (reasoning).
`reason` must say NO ANSWER when it cannot answer; `reason_final` must answer; `answer_line` (small set) asks, in
the same conversation, for the `Answer:` line a reasoning reply left out.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .errors import UserError


@dataclass(frozen=True)
class PromptSet:
    seek_first: str
    seek_next: str
    rate: str
    reason: str
    reason_final: str
    answer_line: str = ""  # a follow-up turn asking for a missing `Answer:` line; "" (paper): none is asked
    answer_line_final: str = ""  # the same when the step must answer
    no_leads: str = ""  # {leads} when the facts shown add no name to the question's (or none are shown): what
    # the question asks about. Asked so in round 2 after a round 1 that posted nothing, the hop-1 agents of 4 of the
    # 6 zh-bridge dev books whose round-1 reply was NONE stated the first hop (1 when asked of "the names in the
    # facts found so far", version 16)


_EN_RATE = ("Based on the extracted information and question, provide a score (0-100) for how useful the "
            "extracted information is for answering this question.\n\nExtracted information: {message}\n\n"
            "Question: {question}\n\nPlease follow this format:Score: (0-100)")
_EN_REASON = ("We have the following extracted information from different chunks of the text:\n{messages}\n\n"
              "Based on the extracted information, decide whether you can confidently answer the question. "
              "If you can, combine and reduce this information into a final answer, as short as possible, "
              "word or phrase. If you cannot, just output \"NO ANSWER\".\n\nQuestion: {question}")
_EN_REASON_FINAL = ("We have the following extracted information from different chunks of the text:\n"
                    "{messages}\n\nBased on the extracted information, combine and reduce this information "
                    "into a final answer, as short as possible, word or phrase.\n\nQuestion: {question}")
_EN_SEEK_NEXT = ("We are working on long-text question answering, and you are responsible for one chunk. "
                 "This is the {round} round of Q&A. And we have the previously extracted information from "
                 "all chunks in the previous round. Based on the previously extracted information and "
                 "question, extract new information from the chunk. Do not repeat the previously extracted "
                 "information.{no_info}\n\nYour chunk: {chunk}\n\nPreviously extracted information: "
                 "{messages}\n\nQuestion: {question}")

_ZH_RATE = ("根据提取的信息和问题，给出一个分数（0-100），评估提取的信息对回答该问题的有用程度。\n\n"
            "提取的信息: {message}\n\n问题: {question}\n\n请遵循以下格式: Score: (0-100)")

PAPER = {
    "hotpotqa": PromptSet(
        seek_first=("We are working on long-text question answering, and you are responsible for one chunk. "
                    "Read the following chunk and extract as much information as possible related to the "
                    "question. Ensure your extracted information provides clear context and is logically "
                    "complete. If no information, just output \"NO INFORMATION\".\n\nYour chunk: {chunk}\n\n"
                    "Question: {question}"),
        seek_next=_EN_SEEK_NEXT.replace("{no_info}", " If no new information, just output \"NO INFORMATION\"."),
        rate=_EN_RATE, reason=_EN_REASON, reason_final=_EN_REASON_FINAL),
    "en": PromptSet(
        seek_first=("Read the following article and extract as much information as possible related to the "
                    "question.\n\n{chunk}\n\nQuestion: {question}"),
        seek_next=_EN_SEEK_NEXT.replace("{no_info}", ""),
        rate=_EN_RATE, reason=_EN_REASON, reason_final=_EN_REASON_FINAL),
    "zh": PromptSet(
        seek_first="请阅读以下文章并尽可能提取与信息相关的信息。\n\n{chunk}\n\n问题: {question}",
        seek_next=("我们正在进行长文本问答任务，你负责处理其中一个文本块。这是第{round_number}轮问答。我们在之前几轮已经对"
                   "所有文本块中提取了信息。请基于先前提取的信息和问题，从当前文本块中提取新信息。不要重复已提取的"
                   "信息。\n\n你的文本块: {chunk}\n\n先前提取的信息: {messages}\n\n问题: {question}"),
        rate=_ZH_RATE,
        reason=("我们有以下从不同文本块中提取的信息:\n{messages}\n\n根据提取的信息，请判断是否能确定地回答该问题。"
                "如果能，将这些信息合并并简化为最终答案。请尽量简短地回答，只使用一个或多个词语。如果不能，直接输出"
                "\"NO ANSWER\"。\n\n问题: {question}"),
        reason_final=("我们有以下从不同文本块中提取的信息:\n{messages}\n\n根据提取的信息, 将这些信息合并并简化为"
                      "最终答案。请尽量简短地回答, 只使用一个或多个词语。\n\n问题: {question}"),
    ),
}

# A later round asks what the agent's text says of the names the facts found so far add to the question's
# ({leads}, extlib.grounding.new_names). Asked instead to "write down the facts that continue or complete the facts
# found so far", the agent holding "Wrenby is a village in the county of Rutmoor", shown "Tobias Cobbold was born at
# Wrenby", wrote NONE; over 30 en-bridge dev books the bridge reached the scratchpad in 19 that way and 23 this way
# (benchmarks/seek_prompts.py, wordings `continue` and `leads`).
_EN_LEADS = ("What does the text say about {leads}? Write down those facts in full sentences with names. Do not copy "
             "the facts found so far. If the text does not mention {leads}, write NONE.")
_ZH_LEADS = ("文本中关于{leads}说了什么？用带有名字的完整句子写下这些事实。不要照抄目前找到的事实。"
             "如果文本没有提到{leads}，写 NONE。")

_SMALL_EN = PromptSet(
    # Measured on the 1.5B model: "NO INFORMATION" in capitals pulled it into replying exactly that even for
    # the chunk holding the first hop, "NONE" did not; in round 2+ the agent holding the second hop linked it
    # ("... Kettleby, which lies in the county of Rutland") only when the question and the facts found so far
    # came before its text, not after it.
    seek_first=("Text:\n{chunk}\n\nQuestion: {question}\nWrite down the facts from the text that are related to "
                "the question, in full sentences with names. If there are none, write NONE."),
    seek_next="Question: {question}\nFacts found so far:\n{messages}\n\nText:\n{chunk}\n\n" + _EN_LEADS,
    rate=("Information:\n{message}\n\nQuestion: {question}\nHow useful is this information for answering the "
          "question? Reply with a score from 0 to 100 in the format Score: <number>."),
    reason=("Facts found in a long text:\n{messages}\n\nQuestion: {question}\nUsing only these facts, reason "
            "in one or two sentences, then write a last line `Answer: <short phrase>`. If the facts are not "
            "enough to answer, write the last line `Answer: NO ANSWER`."),
    reason_final=("Facts found in a long text:\n{messages}\n\nQuestion: {question}\nUsing these facts, reason "
                  "in one or two sentences, then write a last line `Answer: <short phrase>` with your best "
                  "answer."),
    answer_line="Now write only the last line: `Answer: <short phrase>`, or `Answer: NO ANSWER`.",
    answer_line_final="Now write only the last line: `Answer: <short phrase>` with your best answer.",
    no_leads="the person or thing the question asks about",
)

_SMALL_ZH = PromptSet(
    seek_first=("文本：\n{chunk}\n\n问题：{question}\n写下文本中与这个问题有关的事实，用带有名字的完整句子。"
                "如果没有，写 NONE。"),
    seek_next="问题：{question}\n目前找到的事实：\n{messages}\n\n文本：\n{chunk}\n\n" + _ZH_LEADS,
    rate=("信息：\n{message}\n\n问题：{question}\n"
          "这条信息对回答这个问题有多大用处？给出0到100的分数，格式：Score: <分数>"),
    reason=("从一篇长文中找到的信息：\n{messages}\n\n问题：{question}\n只根据这些信息，用一两句话推理，"
            "然后在最后一行写 `Answer: <简短答案>`。如果信息不足以回答，最后一行写 `Answer: NO ANSWER`。"),
    reason_final=("从一篇长文中找到的信息：\n{messages}\n\n问题：{question}\n根据这些信息，用一两句话推理，"
                  "然后在最后一行写 `Answer: <简短答案>`，给出你最好的答案。"),
    answer_line="现在只写最后一行：`Answer: <简短答案>`，或 `Answer: NO ANSWER`。",
    answer_line_final="现在只写最后一行：`Answer: <简短答案>`，给出你最好的答案。",
    no_leads="问题所问的人或事物",
)

SMALL = {"hotpotqa": _SMALL_EN, "en": _SMALL_EN, "zh": _SMALL_ZH}
PROMPT_SETS = {"paper": PAPER, "small": SMALL}

# The small set's round-2+ seeking prompt with the agent's chunk first, as in round 1: everything up to the
# question repeats from round to round, so a server with a prefix cache computes only the facts and the
# instruction after it (issue 14). The default puts the facts before the text (see _SMALL_EN).
_CHUNK_FIRST_NEXT = {
    "en": "Text:\n{chunk}\n\nQuestion: {question}\nFacts found so far:\n{messages}\n\n" + _EN_LEADS,
    "zh": "文本：\n{chunk}\n\n问题：{question}\n目前找到的事实：\n{messages}\n\n" + _ZH_LEADS,
}
LAYOUTS = ("facts-first", "chunk-first")


def get_prompts(prompt_set: str, variant: str, layout: str = "facts-first") -> PromptSet:
    """variant: `en`, `zh` or `hotpotqa` (the paper's HotpotQA extraction wording); layout (small set only):
    where a later round's seeking prompt puts the agent's chunk, after the facts found so far or first."""
    if prompt_set not in PROMPT_SETS:
        raise UserError(f"unknown prompt set {prompt_set!r}; choose one of {list(PROMPT_SETS)}")
    if variant not in PROMPT_SETS[prompt_set]:
        raise UserError(f"unknown prompt variant {variant!r}; choose one of {list(PROMPT_SETS[prompt_set])}")
    if layout not in LAYOUTS:
        raise UserError(f"unknown layout {layout!r}; choose one of {list(LAYOUTS)}")
    prompts = PROMPT_SETS[prompt_set][variant]
    if layout == "facts-first":
        return prompts
    if prompt_set != "small":
        raise UserError(f"layout {layout!r} is a variant of the small prompt set; the {prompt_set!r} prompts keep "
                        "their own layout")
    return replace(prompts, seek_next=_CHUNK_FIRST_NEXT["zh" if variant == "zh" else "en"])


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
