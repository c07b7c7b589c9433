"""Every prompt of the survey task, in one place. Sources are shown numbered ([1] title: text) and cited by number,
for both systems: AutoSurvey has its writer cite paper titles and maps each cited title to the nearest paper by
title embedding; a number maps exactly and a small model copies it reliably."""

from __future__ import annotations

OUTLINE = """You are planning a survey on the topic "{topic}". These are titles of sources on the topic:
{titles}

Fill in the outline of the survey's main body below: {sections} sections, each about a different aspect of the topic \
that the sources cover (for example a period, a field, a method or an application), none about the whole topic. \
Replace every <...> and write nothing else.
{slots}"""
# Without source titles (outline_sources = 0): shown titles, the 1.5B model made sections of the first ones in
# retrieval order ("History of mathematics", "Color theory" for "history of astronomy"); from the topic alone it
# wrote parts of it ("... in ancient civilizations", "... in the Middle Ages").
OUTLINE_FROM_TOPIC = """You are planning a survey on the topic "{topic}".

Fill in the outline of the survey's main body below: {sections} sections, each about a different part of the topic \
(for example a period, a region, a branch, a method or an application of it), none about the whole topic. \
Replace every <...> and write nothing else.
{slots}"""
OUTLINE_SLOT = """Section {number}: <title of the {ordinal} aspect>
Description: <one sentence on what it covers>"""

# The task query q of a section (§4.3: "the newly started process takes the previous section into the task query").
TASK = """the section "{number}. {title}" of a survey on "{topic}". The section covers: {description}"""
PREVIOUS = """\nThe previous section of the survey ends:\n{previous}\n"""

# Seeking agents (eq. 7 with the survey's task query): extract cited facts from the chunk's sources. Told to skip
# sources not about the subject, the 1.5B model rejected whole chunks of relevant ones (volcanoes, a development
# topic: NO INFORMATION for Mauna Loa and the Ring of Fire in a section on the Pacific's volcanoes, 4 chunks of 4).
SEEK_FIRST = """You are collecting facts for {task}
{previous}
Sources:
{sources}

Copy from these sources the 3 to 6 sentences that this section could use most, with their names, dates and \
numbers: one a line, each followed by its source's number in brackets, like [{example}]. Write NO INFORMATION only \
if not one source says anything about the section's subject."""

SEEK_NEXT = """You are collecting facts for {task}
{previous}
Other readers have already collected these facts from other sources:
{messages}

Sources:
{sources}

Copy from these sources up to 4 sentences that this section could use and that add to the facts above, with their \
names, dates and numbers: one a line, each followed by its source's number in brackets, like [{example}]. If no \
source adds anything, write NO INFORMATION."""

# The reasoning agent drafts the section as knowledge accumulates (eq. 8): the first step writes its opening from
# the top-ranked facts, each later step a paragraph from the facts ranked next, after the draft's last sentences.
# The facts come right before the instruction: shown the draft first, the 1.5B model went on writing the draft's
# list form from its own knowledge and left the facts unused.
WRITE_FIRST = """You are writing {task}
{previous}
Facts collected from the sources (each ends with the number of its source):
{messages}

Write the opening paragraph of this section from these facts, in your own words. After each sentence that uses a \
fact, put the fact's source number in brackets, like [{example}]. Use only these facts. Do not write the section \
title."""

WRITE_NEXT = """You are writing {task}
The section so far ends:
{draft}

Facts collected from the sources for its next paragraph (each ends with the number of its source):
{messages}

Write the next paragraph of this section from these facts, in your own words, following on from the section so \
far. After each sentence that uses a fact, put the fact's source number in brackets, like [{example}]. Use only \
these facts. Do not repeat the section so far and do not write a title."""

# The baseline: AutoSurvey's subsection writing (without its reflection and refinement steps, as in the paper).
AUTOSURVEY_WRITE = """You are an expert writing a comprehensive survey on "{topic}". Its outline:
{outline}

Sources:
{sources}

Write the content of section "{number}. {title}". It covers: {description}
Write at least {words} words. When a sentence is based on a source above, cite the source's number in brackets \
after it, like [{example}]. Cite only the sources above. Do not write the section title."""

# The judge: DeepSeek-GRM's pointwise scoring of several responses (Liu et al., 2025, the template the paper uses),
# in our words: four general criteria, the judge's own specific criteria and weights, an analysis, then the scores.
JUDGE = """You are a strict expert judge of writing. Score each of the two surveys below as a response to the \
request, using these general criteria:
1. Instruction adherence: 9-10 fully follows the request; 6-8 mostly; 3-5 partly; 1-2 not at all.
2. Usefulness: 9-10 comprehensive and accurate; 6-8 useful but incomplete; 3-5 little useful information; \
1-2 useless or wrong.
3. Level of detail: 9-10 ample details on every aspect; 6-8 fairly detailed; 3-5 some details; 1-2 very brief.
4. Relevance: 9-10 closely on the topic; 6-8 some unnecessary content; 3-5 much off-topic content; 1-2 irrelevant.
Each score is an integer from 1 to 10: 1 meets the criteria not at all, 6 in some parts, 10 perfectly. Analyse \
step by step before scoring, and be as strict as possible.

Request: Write a survey on "{topic}" with numbered citations of its sources.

[Survey 1]
{first}
[End of survey 1]

[Survey 2]
{second}
[End of survey 2]

Answer with three lines:
Specific Criteria: <further criteria for this request, and the weight of each criterion>
Analysis: <compare the two surveys on the criteria>
Scores: <the overall score of survey 1 and of survey 2, like \\boxed{{x, y}}>"""
