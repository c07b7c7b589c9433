"""The lesson's names for what happened to each call: a reason read into pandas as NaN is no reason."""

import json
import math
from pathlib import Path

import pandas as pd

from extlib.lesson import reasoning_verdict, seek_outcome

TRACE = Path(__file__).parents[1] / "results" / "cpu" / "00_lesson" / "trace.json"


def test_an_accepted_answer_is_an_answer_whether_its_missing_reason_is_none_or_nan():
    call = {"role": "reason", "output": "Facts found: ...\nAnswer: New York", "dropped": None, "error": None}
    assert reasoning_verdict(call) == "answer"
    assert reasoning_verdict({**call, "dropped": math.nan, "error": math.nan}) == "answer"
    assert reasoning_verdict({**call, "output": "Answer: NO ANSWER"}) == "NO ANSWER"
    assert reasoning_verdict({**call, "dropped": "no message states it"}) == "not stated by the messages: no answer"
    assert reasoning_verdict({**call, "error": "retries-exhausted: ..."}) == "failed"
    waits = "chunk 2's agent has not seen the answer its chunk names: the text may go on from it"
    assert reasoning_verdict({**call, "dropped": waits}) == ("waits: agent 2 has not been shown it "
                                                           "(its chunk names it)")


def test_the_committed_lessons_final_answer_reads_as_accepted_through_pandas():
    calls = pd.DataFrame(json.loads(TRACE.read_text())["extagents"]["calls"])  # None becomes NaN here
    reasons = calls[calls.role == "reason"]
    assert pd.isna(reasons["dropped"].iloc[-1])
    assert reasons.apply(reasoning_verdict, axis=1).tolist()[-1] == "answer"


def test_seek_outcomes():
    seek = {"role": "seek", "output": "Duffy Jackson was born in Freeport.", "dropped": math.nan, "error": math.nan}
    assert seek_outcome(seek) == "kept"
    assert seek_outcome({**seek, "output": "NO INFORMATION"}) == "NO INFORMATION"
    assert seek_outcome({**seek, "dropped": "ungrounded: 0.29 of its words are in the chunk"}) == "not in its chunk"
    assert seek_outcome({**seek, "dropped": "not in its chunk: its sentences hold 0.20 of the reply's claims"}) == \
        "not in its chunk"
    assert seek_outcome({**seek, "dropped": "names nothing the question or the messages shown name: no chain to the "
                                            "question"}) == "no chain yet"
    assert seek_outcome({**seek, "dropped": "claims nothing beyond the question and the messages shown"}) == "echo"
    assert seek_outcome({**seek, "output": "NONE", "posted": "Amos Pike was born in Rutland."}) == "kept"  # held
    assert seek_outcome({**seek, "dropped": "echoes the question or the messages it was shown"}) == "echo"
    assert seek_outcome({**seek, "dropped": "adds nothing to the scratchpad"}) == "adds nothing"
    assert seek_outcome({**seek, "error": "retries-exhausted"}) == "failed"
