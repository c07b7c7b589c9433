"""The books built to need the bridge: disjoint splits, one chain among look-alike notes, hops far apart."""

import json
import re

import pytest

from extlib.datasets import load_tasks
from extlib.datasets.splits import FOLDER, SPLITS, drawn_from, split_ids
from extlib.datasets.zh_bridge import questions


@pytest.mark.parametrize("dataset", ["zh-bridge", "hotpotqa-bridge", "en-bridge"])
def test_the_splits_are_disjoint_and_committed(dataset):
    lists = json.loads((FOLDER / f"{dataset}.json").read_text())
    assert set(lists) == set(SPLITS) and all(len(ids) == len(set(ids)) == 200 for ids in lists.values())
    assert not set(lists["dev"]) & set(lists["test"]) and not set(lists["test"]) & set(lists["reserve"]) \
        and not set(lists["dev"]) & set(lists["reserve"])
    with pytest.raises(ValueError, match="split must be one of"):
        split_ids(dataset, "train")


def test_a_row_is_told_by_the_list_it_was_drawn_from_and_the_held_out_set_is_all_test():
    assert drawn_from("zh-bridge", {"split": "dev"}) == "dev"
    assert drawn_from("hotpotqa", {"split": "test", "position": 0.2}) == "test"
    assert drawn_from("babilong", {}) == "test"  # no lists: every id is a test id
    assert drawn_from("zh-longdoc", {"position": 0.25}) == ""  # drawn from every question (the first study)


def province_notes(knowledge: str) -> list[str]:
    return [p for p in knowledge.split("\n\n") if re.search(r"村.*省|省.*村", p) and len(p) < 60]


def test_a_chinese_book_has_one_chain_to_a_province_among_notes_of_the_same_kinds():
    row = {q["id"]: q for q in questions()}
    for task in load_tasks("zh-bridge", 4096, n=5, seed=3, split="dev", distractors=6, progress=False):
        q = row[task.id]
        notes = province_notes(task.knowledge)
        assert len(notes) == 7 and sum(q["village"] in n for n in notes) == 1  # the question's village: one note
        provinces = {p for n in notes for p in re.findall(r"(\w{2})省", n)}
        assert len(provinces) == 7 and q["region"] in provinces  # every province note names another province
        born = [n for n in task.knowledge.split("\n\n") if q["person"] in n]
        assert len(born) == 1 and q["village"] in born[0]  # only hop 1 links the question's person
        hop1, hop2 = (g["token_offset"] for g in task.meta["gold"])
        assert abs(hop2 - hop1) >= 600 and hop1 // 512 != hop2 // 512  # in different 512-token chunks
    again = load_tasks("zh-bridge", 4096, n=5, seed=3, split="dev", distractors=6, progress=False)
    assert [t.knowledge for t in again] == [t.knowledge for t in load_tasks(
        "zh-bridge", 4096, n=5, seed=3, split="dev", distractors=6, progress=False)]


def test_an_english_book_has_one_chain_to_a_county_among_notes_of_the_same_kinds():
    from extlib.datasets import en_bridge

    row = {q["id"]: q for q in en_bridge.questions()}
    for task in load_tasks("en-bridge", 4096, n=5, seed=3, split="dev", distractors=6, progress=False):
        q = row[task.id]
        notes = [n for n in task.meta["gold"] + task.meta["decoys"] if any(c in n["fact"] for c in en_bridge.COUNTIES)]
        assert len(notes) == 7 and sum(q["village"] in n["fact"] for n in notes) == 1
        counties = {c for n in notes for c in en_bridge.COUNTIES if c in n["fact"]}
        assert len(counties) == 7 and q["region"] in counties  # every county note names another county
        surname = q["person"].split()[-1]
        born = [p for p in task.knowledge.split("\n\n") if surname in p]
        assert len(born) == 1 and q["village"] in born[0]  # only hop 1 names the question's person
        assert all(n["fact"] in task.knowledge for n in task.meta["gold"] + task.meta["decoys"])
        hop1, hop2 = (g["token_offset"] for g in task.meta["gold"])
        assert abs(hop2 - hop1) >= 600 and task.answers == [q["region"]] and task.metric == "hotpotqa"


def test_the_shortcut_book_lacks_only_the_first_hop():
    full = load_tasks("zh-bridge", 1024, n=3, seed=0, progress=False)
    short = load_tasks("zh-bridge", 1024, n=3, seed=0, progress=False, without_first_hop=True)
    for a, b in zip(full, short):
        hop1, hop2 = (g["fact"] for g in a.meta["gold"])
        assert hop1 in a.knowledge and hop1 not in b.knowledge and hop2 in b.knowledge
        assert all(d["fact"] in b.knowledge for d in a.meta["decoys"])


def test_the_splits_draw_from_their_own_ids_only():
    for split in SPLITS:
        ids = {t.id for t in load_tasks("zh-bridge", 1024, n=10, seed=1, split=split, progress=False)}
        assert ids <= set(split_ids("zh-bridge", split))


def test_an_english_book_holds_a_bridge_question_among_look_alike_wikipedia_paragraphs():
    tasks = load_tasks("hotpotqa-bridge", 8192, n=4, seed=0, split="dev", wiki_share=0.5, progress=False)
    for task in tasks:
        assert task.meta["type"] == "bridge" and task.meta["own_distractors"] >= 4 and task.meta["other_paragraphs"]
        titles = [g["title"] for g in task.meta["gold"]]
        assert not {d["title"] for d in task.meta["decoys"]} & set(titles)
        hop1, hop2 = (g["token_offset"] for g in task.meta["gold"])
        assert abs(hop2 - hop1) >= 600
        second = next(p for p in task.knowledge.split("\n\n") if p.startswith(titles[1] + "\n"))
        assert task.answers[0].lower() in second.lower()  # the second hop is the paragraph that states the answer



def test_babilong_style_stories_answer_from_their_supporting_facts_hidden_in_order():
    from extlib.datasets.babilong import stories

    for task, hops in (("qa2", 2), ("qa3", 3)):
        first = stories(task)
        assert len(first) == 300 and [s.sentences for s in first[:5]] == [s.sentences for s in stories(task)[:5]]
        for story in first:
            support = [story.sentences[k] for k in story.support]
            assert len(support) == hops and story.answer in (support[-1] if task == "qa2" else " ".join(support[:-1]))
            obj = story.question.split("the ")[1].split("?")[0].split(" before")[0]
            assert sum(obj in s for s in support) == 1  # the pick-up names the object; the moves only its carrier
    for task in ("qa2", "qa3"):
        for t in load_tasks("babilong", 2048, n=3, seed=0, task=task, progress=False):
            offsets = [g["token_offset"] for g in t.meta["gold"]]
            assert offsets == sorted(offsets) and all(g["fact"] in t.knowledge for g in t.meta["gold"])
