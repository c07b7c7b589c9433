"""Survey generation with a scripted LLM: sources and their errors, citations and the paper's measures, both
section writers, the resumable survey, and the pairwise judge."""

import json
import re

import openai
import pytest

from extlib.datasets.common import DataError
from extlib.methods.base import run_sync
from extlib.methods.extagents import kar_schedule
from extlib.survey import SurveyConfig, SurveyError, judge_pair, load_sources, summarize, write_survey
from extlib.survey.autosurvey import AutoSurveyWriter
from extlib.survey.citations import (
    citation_stats,
    citations_at_end,
    cited_numbers,
    keep_citations,
    merge_citation_runs,
    reattribute,
    renumber,
)
from extlib.survey.drafting import SectionDraft, SectionJob, clean_section, without_repeats
from extlib.survey.extagents_writer import ExtAgentsWriter
from extlib.survey.judge import parse_scores
from extlib.survey.outline import Outline, Section, draft_outline, parse_outline
from extlib.survey.report import table4
from extlib.survey.run import _finish
from extlib.survey.sources import Source
from extlib.testing import scripted_client

from .test_cli import cli

LIGHTHOUSES = {f"light{n:02d}": (f"Lighthouse {name}", f"The lighthouse {name} on the coast of {place} was lit in "
                                 f"{1800 + 7 * n} and its keeper was {keeper}.")
               for n, (name, place, keeper) in enumerate([
                   ("Arden", "Westmarch", "Ezra Holloway"), ("Brisk", "Pellmouth", "Mara Quill"),
                   ("Corrin", "Dunmore", "Silas Fenn"), ("Dover Point", "Kettleby", "Ada Marsh"),
                   ("Eastnor", "Rutland", "Tobias Wren"), ("Fallow", "Harwick", "Iris Vane"),
                   ("Gull Rock", "Marrowby", "Owen Teague"), ("Hollin", "Saltash", "Jonas Reed")])}


@pytest.fixture
def sources(tmp_path):
    folder = tmp_path / "sources"
    folder.mkdir()
    for source_id, (title, text) in LIGHTHOUSES.items():
        (folder / f"{source_id}.txt").write_text(f"{title}\n{text}\n")
    return load_sources(str(folder))


def numbered_sources(prompt: str) -> list[tuple[int, str]]:
    return [(int(k), rest) for k, rest in re.findall(r"^\[(\d+)\] (.*)$", prompt, re.MULTILINE)]


def responder(prompt: str) -> str:
    """A scripted model: an outline, facts citing the first source shown (plus one invented citation), nothing new in
    later rounds (said source by source), paragraphs that restate the facts given, and a judge that always prefers
    survey 1."""
    if prompt.startswith("You are planning a survey"):
        return "Section 1: Early lights\nDescription: the first lighthouses\nSection 2: Keepers\nDescription: who kept"
    if prompt.startswith("You are collecting facts"):
        k, text = numbered_sources(prompt)[0]
        if "Other readers have already collected" in prompt:
            return f"[{k}] NO INFORMATION\n- [{k + 1}]: No information."  # nothing, one source a line
        return f"{text.split(': ', 1)[1]} [{k}] It was also the tallest light [99].\n[{k}] Its lamp burned"  # cut
    if prompt.startswith("You are writing"):
        facts = re.findall(r"^- (.*)$", prompt.split("collected from the sources")[1], re.MULTILINE)
        return "Section 1: Early lights\n" + " ".join(facts)
    if prompt.startswith("You are an expert writing"):
        shown = numbered_sources(prompt)
        return " ".join(f"{text.split(': ', 1)[1]} [{k}]" for k, text in shown) + " Also see [42]."
    if prompt.startswith("You are a strict expert judge"):
        return "Specific Criteria: coverage\nAnalysis: the first is better\nScores: \\boxed{8, 5}"
    raise AssertionError(f"unexpected prompt: {prompt[:80]}")


CONFIG = dict(context_window=1500, chunk_tokens=400, seek_max_tokens=100, write_max_tokens=200, sections=2,
              sources_per_section=8, outline_sources=8, carry_previous=60)


# sources


def test_a_folder_of_text_files_is_a_collection_with_ids_and_titles(sources):
    assert len(sources) == 8 and sources["light00"].title == "Lighthouse Arden"
    found = sources.search("keeper Mara Quill Pellmouth", 3)
    assert found[0].id == "light01" and len(found) == 3
    assert sources.search("zebra", 5) == []
    among = [sources["light03"], sources["light05"]]  # a topic's sources, ranked again for a section
    assert [s.id for s in sources.search("Mara Quill Iris Vane", 5, among=among)] == ["light05"]


def test_a_topics_sources_hold_its_rare_words_before_many_mentions_of_common_ones(tmp_path):
    rows = [{"id": "h", "title": "History of Poland", "text": "The history of Poland: history upon history."},
            {"id": "a", "title": "Telescope", "text": "Astronomy uses the telescope."},
            {"id": "b", "title": "Astronomy", "text": "The history of astronomy is long."},
            {"id": "x", "title": "Cooking", "text": "Bread and salt."},
            {"id": "s", "title": "History of Spain", "text": "Spain has a history."},
            {"id": "c", "title": "History of Chile", "text": "Chile has a history."}]
    (tmp_path / "s.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    collection = load_sources(str(tmp_path / "s.jsonl"))
    bm25 = [s.id for s in collection.search("history of astronomy", 4)]
    assert bm25.index("h") < bm25.index("a")  # BM25 alone: many mentions of "history" beat one of "astronomy"
    assert [s.id for s in collection.about("history of astronomy", 3)] == ["b", "a", "h"]


def test_jsonl_and_autosurvey_databases_load(tmp_path):
    rows = [{"id": "a", "title": "A", "text": "alpha text"}, {"id": "b", "title": "B", "text": "beta text"}]
    (tmp_path / "s.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    assert [s.id for s in load_sources(str(tmp_path / "s.jsonl")).sources] == ["a", "b"]
    db = tmp_path / "db"
    db.mkdir()
    (db / "arxiv_paper_db.json").write_text(json.dumps({"cs_paper_info": {
        "1": {"id": "2401.00001v1", "title": "Agents  at scale", "abs": "We scale agents.", "cat": "cs.CL"},
        "2": {"id": "2402.00002v2", "title": "Long context", "abs": "Windows are short.", "cat": "cs.CL"}}}))
    papers = load_sources(f"autosurvey:{db}")
    assert papers["2401.00001v1"].title == "Agents at scale" and papers.search("windows", 1)[0].id == "2402.00002v2"


@pytest.mark.parametrize("make, message", [
    (lambda p: p.mkdir(), "no .txt or .md files"),
    (lambda p: p.with_suffix(".jsonl").write_text('{"id": "", "title": "t", "text": "x"}'), "has no id"),
    (lambda p: p.with_suffix(".jsonl").write_text('{"id": "a", "title": "t", "text": "x"}\n' * 2), "duplicate id"),
    (lambda p: p.with_suffix(".jsonl").write_text('{"id": "a", "title": "t"}'), "needs text fields"),
    (lambda p: p.with_suffix(".jsonl").write_text("not json"), "line 1: not valid JSON"),
    (lambda p: p.with_suffix(".jsonl").write_bytes(b"\xff\xfe\x00"), "cannot read it as UTF-8"),
    (lambda p: p.with_suffix(".csv").write_text("a,b"), "must be .jsonl"),
    (lambda p: None, "no source collection"),
])
def test_bad_source_collections_are_clear_errors(tmp_path, make, message):
    (tmp_path / "case").mkdir()
    target = tmp_path / "case" / "collection"
    make(target)
    spec = next((str(p) for p in target.parent.iterdir()), str(target))
    with pytest.raises(DataError, match=message):
        load_sources(spec)


def test_an_autosurvey_folder_without_its_database_is_a_clear_error(tmp_path):
    with pytest.raises(DataError, match="no arxiv_paper_db.json"):
        load_sources(f"autosurvey:{tmp_path}")


# citations and the paper's measures


def test_citations_outside_what_was_shown_are_removed_and_counted():
    text, dropped = keep_citations("Lit in 1807 [1, 9]. Tallest [9]. Kept [2; 3].", {1, 2})
    assert (text, dropped) == ("Lit in 1807 [1]. Tallest. Kept [2].", 3)


def test_ranges_count_each_number_and_years_and_links_are_not_citations():
    text = "Stars [1-3]. Planets [2–4]. Founded in [1990]. See [2](http://x). Both [5; 7]."
    assert cited_numbers(text) == [1, 2, 3, 2, 3, 4, 5, 7]
    assert keep_citations(text, {1, 2, 5}) == (
        "Stars [1, 2]. Planets [2]. Founded in [1990]. See [2](http://x). Both [5].", 4)
    numbering: dict[str, int] = {}
    assert renumber("A [2-3]. B [1].", {1: "x", 2: "y", 3: "z"}, numbering) == "A [1, 2]. B [3]."


def test_a_citation_moves_to_the_source_its_sentence_clearly_comes_from():
    shown = {1: "[1] Lighthouse Arden: lit in 1807, kept by Ezra Holloway.",
             2: "[2] Lighthouse Brisk: on the coast of Pellmouth, kept by Mara Quill."}
    text = "Mara Quill kept the Brisk light at Pellmouth [1].\nEzra Holloway kept Arden [1]. Both were lights [2]."
    assert reattribute(text, shown) == (
        "Mara Quill kept the Brisk light at Pellmouth [2].\nEzra Holloway kept Arden [1]. Both were lights [2].", 1)


def test_a_lines_opening_citation_moves_to_the_end_of_each_of_its_sentences():
    # how the 1.5B model copied its sources: "[2] <the source's text>", one source a line
    text = ("[2] The light was lit in 1807. It burned oil\n- [3]: Kept by Mara Quill [4].\n"
            "[1990] was a year. [5]\nNo citation here.")
    assert citations_at_end(text) == ("The light was lit in 1807 [2]. It burned oil [2]\n- Kept by Mara Quill [4].\n"
                                      "[1990] was a year. [5]\nNo citation here.")


def test_sentences_repeating_earlier_ones_are_removed_and_paragraph_breaks_kept():
    draft = "The Arden light on the coast of Westmarch was lit in 1807 [1]."
    new = ("Lit in 1807, the Arden light stood on the coast of Westmarch [2]. Ezra Holloway kept the Arden light "
           "for thirty years [1].\n\nMara Quill kept the Brisk light at Pellmouth [2]. Mara Quill kept the Brisk "
           "light at Pellmouth. Yes it was.")
    assert without_repeats(new, earlier=draft) == (
        "Ezra Holloway kept the Arden light for thirty years [1].\n\nMara Quill kept the Brisk light at Pellmouth [2]. "
        "Yes it was.")


def test_a_writer_that_goes_on_to_copy_its_prompt_is_cut_there():
    reply = "Early lights\nArden was lit in 1807 [1].\n More facts collected from the sources (each ends ...):\n- [2] x"
    assert clean_section(reply, "Early lights") == "Arden was lit in 1807 [1]."


def test_an_outline_has_no_section_about_the_whole_topic(sources):
    llm = scripted_client(lambda prompt: "Section 1: The Lighthouse\nSection 2: Keepers\nSection 3: Fog signals")
    whole = Source("whole", "Lighthouses", "Lighthouses are towers.")
    outline = run_sync(draft_outline(llm, "lighthouses", [whole, *sources.sources[:2]], 2))
    prompt = llm._client.prompts[0]
    assert "- Lighthouses\n" not in prompt and "- Lighthouse Arden" in prompt and "Section 3:" in prompt
    assert [s.title for s in outline.sections] == ["Keepers", "Fog signals"]
    run_sync(draft_outline(llm, "lighthouses", [], 2))  # no source titles: planned from the topic alone
    assert "titles of sources" not in llm._client.prompts[1] and "part of the topic" in llm._client.prompts[1]


def test_references_are_numbered_in_order_of_first_citation_across_sections():
    numbering: dict[str, int] = {}
    first = renumber("A [2]. B [1, 2].", {1: "x", 2: "y"}, numbering)
    second = renumber("C [1]. D [3].", {1: "y", 3: "z"}, numbering)
    assert (first, second) == ("A [1]. B [2, 1].", "C [1]. D [3].")
    assert numbering == {"y": 1, "x": 2, "z": 3}


def test_a_run_of_sentences_citing_the_same_sources_cites_them_once_at_its_end():
    text = ("The light was lit in 1807 [6]. It burned oil [6]. Mara Quill kept it [6]. Brisk came later [2].\n"
            "Both [1, 2]. Were lights [2, 1]. One stood [1] Its keeper [1].")
    merged, marks = merge_citation_runs(text)
    assert merged == ("The light was lit in 1807. It burned oil. Mara Quill kept it [6]. Brisk came later [2].\n"
                      "Both. Were lights [2, 1]. One stood [1] Its keeper [1].")  # no end mark: "[1]" stays
    assert marks == 4 and cited_numbers(merged) == [6, 2, 2, 1, 1, 1]
    assert merge_citation_runs("A [1]. B [2]. C.") == ("A [1]. B [2]. C.", 0)
    inside = "As [6] shows, the light burned oil. It was lit (see [6]). A [1] and B [2] differ [2]. Both [2]."
    assert merge_citation_runs(inside) == (inside, 0)  # only a sentence's one citation at its end is merged


def test_assembling_a_survey_drops_repeats_of_earlier_sections_and_merges_citation_runs(sources, tmp_path):
    drafts = [SectionDraft(1, "Early lights", "Arden was lit in 1807 on the Westmarch coast [1]. It burned oil [1].",
                           ["light00", "light01"], [1, 2]),
              SectionDraft(2, "Keepers", "Arden was lit in 1807 on the Westmarch coast [2]. Mara Quill kept Brisk [1]. "
                           "She kept it for thirty years [1].", ["light01", "light00"], [1, 2])]
    outline = Outline("lighthouses", [Section(d.title, "") for d in drafts])
    llm = scripted_client(lambda prompt: "")
    survey = _finish("lighthouses", "extagents", sources, outline, drafts, {}, tmp_path, llm)
    assert "Arden was lit in 1807 on the Westmarch coast. It burned oil [1]." in survey.body
    assert "## 2. Keepers\n\nMara Quill kept Brisk. She kept it for thirty years [2]." in survey.body
    assert survey.row()["sentences repeating an earlier section"] == 1
    assert survey.row()["citation marks merged"] == 2 and survey.stats.duplicate_marks == 0
    again = "Arden was lit in 1807 on the Westmarch coast [2]. Mara Quill kept Brisk [1]."
    drafts.append(SectionDraft(3, "Again", again, ["light01", "light00"], [1, 2]))
    outline.sections.append(Section("Again", ""))
    survey = _finish("lighthouses", "extagents", sources, outline, drafts, {}, tmp_path, llm)
    assert "## 3. Again\n\n*(Every sentence of this section repeated one of an earlier section.)*" in survey.body
    assert survey.row()["sentences repeating an earlier section"] == 3


def test_citation_measures_follow_the_papers_definitions():
    stats = citation_stats("A [1]. B [1, 2]. C [3].", lambda text: 500)
    assert (stats.citations, stats.citation_marks, stats.duplicate_marks) == (3, 4, 1)
    assert stats.density == 8.0  # 4 citations per 500 tokens = 8 per 1,000
    assert stats.duplication_rate == 25.0


def test_outline_lines_are_parsed_in_the_forms_small_models_write():
    text = ("Here is the outline:\n## Section 1: Early lights\nDescription: the first ones\n2. **Keepers**\n"
            "- Description: who kept them\nSection 3: Early lights\nSection 4: Fog signals")
    sections = parse_outline(text, 3)
    assert [(s.title, s.description) for s in sections] == [
        ("Early lights", "the first ones"), ("Keepers", "who kept them"), ("Fog signals", "")]
    nested = parse_outline("Section 1: Early lights\n1.1 Arden\n1.2. Brisk\nSection 2: Keepers", 3)
    assert [s.title for s in nested] == ["Early lights", "Keepers"]  # sub-sections are not sections


# the two section writers


def job(sources, number: int = 1, previous: str = "") -> SectionJob:
    outline = Outline("lighthouses", [Section("Early lights", "the first lighthouses"), Section("Keepers", "")])
    return SectionJob("lighthouses", outline, number, list(sources.sources), previous)


def test_extagents_agents_read_every_source_and_writing_accumulates_facts_step_by_step(sources):
    llm = scripted_client(responder)
    writer = ExtAgentsWriter(SurveyConfig(**CONFIG))
    draft = run_sync(writer.write(job(sources, previous="The survey began [3] with fog."), llm))
    seek = [p for p in llm._client.prompts if p.startswith("You are collecting facts")]
    agents = draft.extra["agents"]
    assert agents >= 3 and len(seek) == 2 * agents  # round 2 added nothing, so synchronization stopped
    assert sorted(n for p in seek[:agents] for n, _ in numbered_sources(p)) == list(range(1, 9))  # all sources read
    assert "The survey began with fog." in seek[0]  # the previous section's end, its citations removed
    assert draft.invalid_citations == agents  # each agent's invented [99]
    writes = [p for p in llm._client.prompts if p.startswith("You are writing")]
    assert len(writes) == len(kar_schedule(agents)) == draft.extra["steps"]
    assert writes[0].count("\n- ") == 1 and "The section so far ends:" in writes[1]  # top-1 fact, then continuing
    assert not any("lamp burned" in p for p in writes)  # a line the token limit cut is no fact
    firsts = {numbered_sources(p)[0][0] for p in seek[:agents]}  # each agent cited its chunk's first source
    assert set(cited_numbers(draft.text)) == firsts and draft.error is None


def test_the_baseline_reads_only_the_top_sources_its_window_holds(sources):
    llm = scripted_client(responder)
    draft = run_sync(AutoSurveyWriter(SurveyConfig(**{**CONFIG, "context_window": 900})).write(job(sources), llm))
    (prompt,) = llm._client.prompts
    shown = [k for k, _ in numbered_sources(prompt)]
    assert shown == list(range(1, len(shown) + 1)) and 1 < len(shown) < 8  # the best-ranked, in order
    assert draft.read == shown and draft.invalid_citations == 1  # the invented [42]
    assert set(cited_numbers(draft.text)) == set(shown)


def test_a_window_too_small_for_the_instructions_is_a_clear_error(sources):
    writer = AutoSurveyWriter(SurveyConfig(**{**CONFIG, "context_window": 400, "chunk_tokens": 100}))
    with pytest.raises(ValueError, match="raise --context-window"):
        run_sync(writer.write(job(sources), scripted_client(responder)))


# the survey, resumably


def test_a_survey_has_numbered_references_and_a_record_and_a_rerun_calls_nothing(sources, tmp_path):
    llm = scripted_client(responder)
    out = tmp_path / "out"
    survey = run_sync(write_survey("lighthouse history", sources, "extagents", llm, SurveyConfig(**CONFIG), out))
    assert survey.failed == [] and "## 1. Early lights" in survey.markdown and "## 2. Keepers" in survey.markdown
    refs = re.findall(r"^\[(\d+)\] (.+)$", survey.markdown.split("## References")[1], re.MULTILINE)
    assert [int(n) for n, _ in refs] == list(range(1, len(refs) + 1))
    assert cited_numbers(survey.body)[0] == 1 and max(cited_numbers(survey.body)) == len(refs)
    record = json.loads((survey.path.parent / "record.json").read_text())
    assert len(record["sections"]) == 2 and record["row"]["citations"] == survey.stats.citations == len(refs)
    assert sum(len(s["calls"]) for s in record["sections"]) + 1 == len(llm._client.prompts)  # + the outline
    calls = len(llm._client.prompts)
    again = run_sync(write_survey("lighthouse history", sources, "extagents", llm, SurveyConfig(**CONFIG), out))
    assert len(llm._client.prompts) == calls and again.markdown == survey.markdown


def test_a_failed_section_is_recorded_and_written_by_the_next_run(sources, tmp_path):
    def flaky(prompt: str) -> str:
        if prompt.startswith("You are an expert writing") and '"2. Keepers"' in prompt:
            raise openai.APIConnectionError(request=None)  # the server went away
        return responder(prompt)

    out = tmp_path / "out"
    broken = run_sync(write_survey("lighthouse history", sources, "autosurvey", scripted_client(flaky, max_retries=1),
                                   SurveyConfig(**CONFIG), out))
    assert broken.failed == [2] and "This section was not written" in broken.markdown
    assert "## 1. Early lights" in broken.markdown and broken.stats.citations > 0
    llm = scripted_client(responder)
    fixed = run_sync(write_survey("lighthouse history", sources, "autosurvey", llm, SurveyConfig(**CONFIG), out))
    assert fixed.failed == [] and len(llm._client.prompts) == 1  # only section 2 was written again


def test_a_rerun_with_other_settings_and_topics_without_sources_are_clear_errors(sources, tmp_path):
    llm = scripted_client(responder)
    run_sync(write_survey("lighthouse history", sources, "autosurvey", llm, SurveyConfig(**CONFIG), tmp_path))
    with pytest.raises(SurveyError, match="written with other settings .*config"):
        run_sync(write_survey("lighthouse history", sources, "autosurvey", llm, SurveyConfig(**{**CONFIG, "words": 99}),
                              tmp_path))
    with pytest.raises(SurveyError, match="no source in .* shares a word"):
        run_sync(write_survey("zebra migration", sources, "autosurvey", llm, SurveyConfig(**CONFIG), tmp_path))
    with pytest.raises(SurveyError, match="topic is empty"):
        run_sync(write_survey("  ", sources, "autosurvey", llm, SurveyConfig(**CONFIG), tmp_path))
    with pytest.raises(SurveyError, match="unknown survey system"):
        run_sync(write_survey("lighthouse history", sources, "storm", llm, SurveyConfig(**CONFIG), tmp_path))


# the judge and Table 4


def test_scores_are_read_from_the_last_box_or_a_scores_line():
    assert parse_scores("Scores: \\boxed{7, 9}") == (7.0, 9.0)
    assert parse_scores("first \\boxed{1, 2} then boxed{6, 4}") == (6.0, 4.0)
    assert parse_scores("Scores: 8 and 6") == (8.0, 6.0)
    assert parse_scores("Scores: \\boxed{11, 3}") is None and parse_scores("no scores") is None
    assert parse_scores("Scores: 7/10, 8/10") == (7.0, 8.0)  # "x/10" is a score, not two
    assert parse_scores("Survey 1 score: 7/10\nSurvey 2 score: 8/10") is None  # no Scores heading: criteria?
    # a score per survey under the reply's last Scores heading, as the 1.5B judge writes it too
    assert parse_scores("Survey 1: 3\nSurvey 2: 4\n### Scores: x, y\nSurvey 1: 7\nSurvey 2: 8") == (7.0, 8.0)
    assert parse_scores("Scores: Survey 1: 9/10, Survey 2: 3/10") == (9.0, 3.0)
    assert parse_scores("Scores:\n- **Survey 1**: 6\n- **Survey 2**: 5") == (6.0, 5.0)
    assert parse_scores("Scores: Survey 1 = 9/10, Survey 2 = 1/10") == (9.0, 1.0)
    assert parse_scores("Scores:\nThe overall score of survey 1 is 8/10 and of survey 2 is 9/10.") == (8.0, 9.0)
    assert parse_scores("Relevance: Survey 1: 8, Survey 2: 6\nScores: see above") is None
    # what the bundled 1.5B judge writes: a box per survey, of one score or of the four criteria's
    assert parse_scores("## Scores:\nSurvey 1: \\boxed{5}\nSurvey 2: \\boxed{9}") == (5.0, 9.0)
    assert parse_scores("Scores:\nSurvey 1: \\boxed{10, 10, 10, 10}\nSurvey 2: \\boxed{10, 9, 10, 9}") == (10.0, 9.5)


def test_swapping_the_order_cancels_a_judge_that_always_prefers_the_first_place():
    llm = scripted_client(responder)
    judgements = run_sync(judge_pair(llm, "lighthouses", {"extagents": "Survey A [1].", "autosurvey": "Survey B."},
                                     samples=4, window=4000))
    assert [j.first for j in judgements] == ["extagents", "autosurvey"] * 2
    summary = summarize(judgements)
    assert summary["extagents"] == summary["autosurvey"] == {
        "mean score": 6.5, "wins": 2, "ties": 0, "losses": 2, "win rate": 0.5, "unreadable": 0}
    assert "Survey A [1]." in llm._client.prompts[0].split("[Survey 1]")[1].split("[End of survey 1]")[0]


def test_an_odd_number_of_judge_samples_is_refused():
    with pytest.raises(ValueError, match="positive even number"):
        run_sync(judge_pair(scripted_client(responder), "t", {"a": "x", "b": "y"}, samples=3, window=4000))


def test_judge_prompts_that_do_not_fit_its_window_are_a_clear_error():
    with pytest.raises(ValueError, match="raise --judge-window"):
        run_sync(judge_pair(scripted_client(responder), "t", {"a": "x" * 3000, "b": "y" * 3000}, window=4000))


def test_table4_averages_topics_beside_the_papers_numbers():
    rows = [{"system": "extagents", "judge mean score": 7.0, "citations": 10, "citation density": 2.0,
             "duplication rate %": 10.0}, {"system": "extagents", "judge mean score": 8.0, "citations": 20,
                                           "citation density": 4.0, "duplication rate %": 0.0}]
    ours, paper = table4(rows)[2:4]
    assert ours == {"system": "extagents", "source": "ours (2 topics)", "judge mean score": 7.5, "citations": 15.0,
                    "citation density": 3.0, "duplication rate %": 5.0}
    assert paper["citations"] == 191


@pytest.mark.parametrize("args, message", [
    (["--method", "magic"], "unknown survey system"),
    (["--method", "extagents"], "judging compares two systems"),
    (["--sources", "{tmp}/missing"], "no source collection"),
    (["--chunk-tokens", "4000"], "must be below context_window"),
    (["--judge-samples", "3"], "give an even number"),
])
def test_bad_survey_input_is_a_clear_error(tmp_path, args, message):
    base = {"--topic": "lighthouses", "--sources": str(tmp_path)}
    given = dict(zip(args[::2], args[1::2]))
    argv = [token for k, v in {**base, **given}.items() for token in (k, v.replace("{tmp}", str(tmp_path)))]
    (tmp_path / "a.txt").write_text("Lighthouse\nA light.")
    result = cli("survey", *argv)
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr


def test_an_extagents_section_with_a_failed_seeking_call_is_written_again_by_the_next_run(sources, tmp_path):
    def flaky(prompt: str) -> str:
        if prompt.startswith("You are collecting facts") and "[1] " in prompt:
            raise openai.APIConnectionError(request=None)  # the agent holding source 1 never gets an answer
        return responder(prompt)

    out, config = tmp_path / "out", SurveyConfig(**CONFIG)
    broken = run_sync(write_survey("lighthouse history", sources, "extagents", scripted_client(flaky, max_retries=1),
                                   config, out))
    assert broken.failed == [1, 2] and "seeking call(s) failed" in broken.sections[0].error
    llm = scripted_client(responder)
    fixed = run_sync(write_survey("lighthouse history", sources, "extagents", llm, config, out))
    assert fixed.failed == [] and any("[1] " in p for p in llm._client.prompts)


def test_a_section_no_source_gives_facts_for_stays_empty_instead_of_invented(sources, tmp_path):
    def nothing(prompt: str) -> str:
        return "NO INFORMATION" if prompt.startswith("You are collecting facts") else responder(prompt)

    llm = scripted_client(nothing)
    survey = run_sync(write_survey("lighthouse history", sources, "extagents", llm, SurveyConfig(**CONFIG), tmp_path))
    assert survey.failed == [] and not any(p.startswith("You are writing") for p in llm._client.prompts)
    assert survey.markdown.count("No source gave facts for this section") == 2 and survey.stats.citations == 0


def test_a_reference_list_the_model_writes_is_cut_and_the_measures_read_every_section(sources, tmp_path):
    def with_references(prompt: str) -> str:
        reply = responder(prompt)
        return f"{reply}\n\n## References\n[1] Lighthouse Arden\n[2] Lighthouse Brisk" \
            if prompt.startswith("You are an expert writing") else reply

    survey = run_sync(write_survey("lighthouse history", sources, "autosurvey", scripted_client(with_references),
                                   SurveyConfig(**CONFIG), tmp_path))
    assert survey.markdown.count("## References") == 1 and "## 2. Keepers" in survey.body
    assert survey.stats.citation_marks == len(cited_numbers(survey.body))


def test_a_rerun_over_changed_sources_is_refused(sources, tmp_path):
    run_sync(write_survey("lighthouse history", sources, "autosurvey", scripted_client(responder),
                          SurveyConfig(**CONFIG), tmp_path))
    folder = tmp_path / "sources"
    (folder / "light00.txt").write_text("Lighthouse Arden\nRebuilt in 1920 by a new keeper.\n")
    with pytest.raises(SurveyError, match="sources_sha256"):
        run_sync(write_survey("lighthouse history", load_sources(str(folder)), "autosurvey",
                              scripted_client(responder), SurveyConfig(**CONFIG), tmp_path))


def test_surveys_with_unwritten_sections_are_not_judged(sources, tmp_path):
    from extlib.survey import judge_surveys

    def flaky(prompt: str) -> str:
        if prompt.startswith("You are an expert writing"):
            raise openai.APIConnectionError(request=None)
        return responder(prompt)

    config = SurveyConfig(**CONFIG)
    good = run_sync(write_survey("lighthouse history", sources, "extagents", scripted_client(responder), config,
                                 tmp_path))
    bad = run_sync(write_survey("lighthouse history", sources, "autosurvey", scripted_client(flaky, max_retries=0),
                                config, tmp_path))
    llm = scripted_client(responder)
    summary = run_sync(judge_surveys(llm, good, bad, tmp_path, samples=2, window=4000))
    assert "were not written" in summary["autosurvey"]["skipped"] and not llm._client.prompts
    assert json.loads((tmp_path / "lighthouse-history" / "judge.json").read_text())["judgements"] == []


def test_judgements_are_read_back_without_a_model_call_until_a_survey_or_setting_changes(sources, tmp_path):
    from extlib.survey import judge_surveys

    config = SurveyConfig(**CONFIG)
    a, b = (run_sync(write_survey("lighthouse history", sources, system, scripted_client(responder), config, tmp_path))
            for system in ("extagents", "autosurvey"))
    llm = scripted_client(responder)
    first = run_sync(judge_surveys(llm, a, b, tmp_path, samples=2, window=8000))
    assert first["extagents"]["wins"] == first["autosurvey"]["wins"] == 1 and len(llm._client.prompts) == 2
    assert run_sync(judge_surveys(llm, a, b, tmp_path, samples=2, window=8000)) == first
    assert len(llm._client.prompts) == 2  # read back from judge.json
    run_sync(judge_surveys(llm, a, b, tmp_path, samples=4, window=8000))
    assert len(llm._client.prompts) == 6  # other settings: judged anew


def test_the_autosurvey_database_leaves_out_papers_without_abstracts_and_refuses_other_rows(tmp_path, capsys):
    (tmp_path / "arxiv_paper_db.json").write_text(json.dumps({"cs_paper_info": {
        "1": {"id": "2401.00001v1", "title": "Agents", "abs": "We scale agents."},
        "2": {"id": "2402.00002v2", "title": "Empty", "abs": ""}}}))
    assert [s.id for s in load_sources(f"autosurvey:{tmp_path}").sources] == ["2401.00001v1"]
    assert "1 of 2 papers have no abstract" in capsys.readouterr().err
    (tmp_path / "arxiv_paper_db.json").write_text(json.dumps({"cs_paper_info": {"1": "not a record"}}))
    with pytest.raises(DataError, match="not records"):
        load_sources(f"autosurvey:{tmp_path}")


def test_a_topic_of_short_words_still_finds_its_sources(tmp_path):
    (tmp_path / "s.jsonl").write_text(json.dumps({"id": "a", "title": "AI", "text": "AI is used in go."}))
    assert [s.id for s in load_sources(str(tmp_path / "s.jsonl")).about("AI", 5)] == ["a"]
