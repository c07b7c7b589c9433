"""`extagents survey`: each system's survey of a topic written (resumably), then the two judged pairwise, and the
row of the paper's Table 4 printed for each."""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..cli_flags import bounded, flag_type, positive
from ..engine import EngineSettings, clients
from ..errors import UserError
from ..methods.base import knob_types, run_sync
from .drafting import SurveyConfig
from .report import markdown_table
from .run import WRITERS, judge_surveys, write_survey
from .sources import load_sources


def add_survey_arguments(parser: argparse.ArgumentParser) -> None:
    """The survey verb's flags, and one per SurveyConfig field (unset: its default)."""
    parser.add_argument("--topic", required=True, help='e.g. "history of astronomy"')
    parser.add_argument("--sources", required=True, help="wiki-vital (10,033 encyclopedia articles, offline), "
                        "hotpotqa-wiki (66k Wikipedia paragraphs), autosurvey:FOLDER (AutoSurvey's paper database), a "
                        "folder of .txt/.md files (one source each) or a .jsonl file of {id, title, text} rows")
    parser.add_argument("--method", default="extagents,autosurvey", help="extagents, autosurvey, or both as a comma "
                        "list (default both)")
    parser.add_argument("--out", default="surveys", help="folder of surveys, one subfolder per topic (default "
                        "surveys/); a rerun continues what is there")
    parser.add_argument("--judge-samples", type=bounded(int, 0, None, "a non-negative integer"), default=2,
                        help="pairwise judgements of the two surveys, an even number: their order is swapped every "
                        "other one (paper: 8; default 2; 0: none)")
    parser.add_argument("--judge-window", type=positive, default=8192,
                        help="the judge's context window, for both surveys at once (default 8192)")
    parser.add_argument("--judge-temperature", type=bounded(float, 0, 2, "a number between 0 and 2"), default=1.0,
                        help="the judge's sampling temperature (paper: 1)")
    group = parser.add_argument_group("survey settings")
    kinds = knob_types(SurveyConfig)
    for f in dataclasses.fields(SurveyConfig):
        scalar, convert = flag_type(kinds[f.name], f.metadata)
        options: dict[str, Any] = {"dest": f.name, "default": None,
                                   "help": f"{f.metadata.get('help', '')} (default {f.default})"}
        if scalar is bool:
            options["action"] = argparse.BooleanOptionalAction
        else:
            options["type"] = convert
        group.add_argument("--" + f.name.replace("_", "-"), **options)


def survey_command(args: argparse.Namespace, engine: EngineSettings) -> int:
    """Write the surveys of the systems `--method` names, judge them when two are given and `--judge-samples` > 0,
    print where they are and the table; 1 when a section failed (a rerun writes it), else 0."""
    topic, out, judge_samples, judge_window = args.topic, Path(args.out), args.judge_samples, args.judge_window
    config = SurveyConfig(**{f.name: getattr(args, f.name) for f in dataclasses.fields(SurveyConfig)
                             if getattr(args, f.name, None) is not None})
    systems_text, judge_temperature = args.method, args.judge_temperature
    systems = [m.strip() for m in systems_text.split(",") if m.strip()]
    unknown = [m for m in systems if m not in WRITERS]
    if unknown or not systems:
        raise UserError(f"unknown survey system(s) {unknown or '(none given)'}; choose from: {', '.join(WRITERS)}")
    if judge_samples and len(systems) != 2:
        raise UserError("judging compares two systems: give --method extagents,autosurvey, or --judge-samples 0")
    if judge_samples % 2:
        raise UserError(f"--judge-samples {judge_samples}: give an even number, so that each survey is shown "
                        "first equally often (or 0 for no judging)")
    collection = load_sources(args.sources)
    window = max(config.context_window, judge_window if judge_samples else 0)
    with clients(replace(engine, context_window=window)) as (llm, reasoner):
        surveys = [run_sync(write_survey(topic, collection, s, llm, config, out, reasoner)) for s in systems]
        rows = [result.row() for result in surveys]
        for result in surveys:
            print(f"[{result.system}] {result.path}" + (f"  (sections {result.failed} failed: rerun to write "
                                                         "them)" if result.failed else ""))
        if judge_samples:
            summary = run_sync(judge_surveys(llm, *surveys, out, judge_samples, judge_temperature, judge_window))
            for row in rows:
                row.update({f"judge {k}": v for k, v in summary[row["system"]].items() if k != "skipped"})
            skipped = summary[systems[0]].get("skipped")
            where = surveys[0].path.parents[1] / "judge.json"
            print(f"judge skipped: {skipped}" if skipped else f"judgements: {where}")
    print(markdown_table(rows))
    return 1 if any(r.failed for r in surveys) else 0
