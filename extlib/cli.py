"""`extagents ask | setup | serve | data | infbench-plus | run | figures | report | survey`: each verb parses its
flags and hands them to the library (extlib.configs for experiments, extlib.presets for notebooks). Input the user
can fix (or a machine to set up, or a model call that failed for good) ends with one clear line on stderr and exit
code 2; any other exception is a bug and shows its traceback."""

from __future__ import annotations

import argparse
import json
import signal
import sys
import typing
from pathlib import Path

from .cli_flags import (
    add_knob_flags,
    bounded,
    given_knobs,
    key_values,
    method_names,
    positive,
)
from .configs import config_paths, from_config, run_experiments
from .datasets import DATASETS, load_tasks, prepare, show_tasks
from .datasets import options as dataset_options
from .documents import read_document
from .engine import DEFAULT_WINDOW, EngineSettings, clients
from .errors import ModelCallRefused, SetupError, UserError
from .infbench_plus import build as infbench_plus_build
from .llm import LLMError
from .methods import METHODS, knobs_for, make_method
from .models import DEFAULT_MODEL, MODELS, ensure_model
from .runfile import parse_pins
from .serve import LocalServer
from .survey.command import add_survey_arguments, survey_command
from .trace import LANGS, Task, write_trace


class Parser(argparse.ArgumentParser):
    """Parse errors raise UserError (one line, exit code 2, and a config file's name in front)."""

    def error(self, message: str) -> typing.NoReturn:
        raise UserError(message)


def build_parser() -> Parser:
    parser = Parser(prog="extagents", description=__doc__)
    verbs = parser.add_subparsers(dest="verb", required=True)

    ask_ = verbs.add_parser("ask", help="answer a question over a document of any length")
    ask_.set_defaults(handler=ask)
    ask_.add_argument("--doc", required=True, help="the document (UTF-8 text file), or - for stdin")
    ask_.add_argument("--question", required=True)
    ask_.add_argument("--lang", choices=LANGS, default="en")
    ask_.add_argument("--method", default="extagents",
                     help=f"one of {', '.join(METHODS)}, or a comma list (e.g. extagents,direct) to compare")
    ask_.add_argument("--trace", help="write every agent call to this JSON file")
    ask_.add_argument("--json", action="store_true", help="print the predictions as JSON")
    add_knob_flags(ask_)
    _engine_args(ask_, reasoning=True)

    setup_ = verbs.add_parser("setup", help="fetch, assemble and verify bundled models")
    setup_.set_defaults(handler=setup)
    setup_.add_argument("--model", choices=list(MODELS), action="append",
                       help=f"repeatable (default {DEFAULT_MODEL})")

    serve_ = verbs.add_parser("serve", help="run the bundled model's server in the foreground for reuse")
    serve_.set_defaults(handler=serve)
    serve_.add_argument("--model", choices=list(MODELS), default=DEFAULT_MODEL)
    serve_.add_argument("--context-window", type=positive, default=DEFAULT_WINDOW)
    _prompt_cache_arg(serve_)

    data_ = verbs.add_parser("data", help="fetch and index every offline dataset (hash-verified), or show tasks")
    data_.set_defaults(handler=data)
    data_.add_argument("--show", choices=list(DATASETS), help="print tasks of this dataset instead")
    _task_args(data_)
    data_.add_argument("--out", help="with --show: write the tasks (knowledge included) to this JSONL file")

    plus = verbs.add_parser("infbench-plus", help="∞Bench+ construction: drop samples one segment answers")
    plus.set_defaults(handler=infbench_plus)
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
    run_.set_defaults(handler=run)
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

    figures_ = verbs.add_parser("figures", help="execute the experiment notebooks under a preset (make figures)")
    figures_.set_defaults(handler=figures)
    figures_.add_argument("--preset", default="quick", help="a file of configs/presets/ (default quick)")
    figures_.add_argument("--only", help="comma list of notebooks to run (default: all, in order)")
    figures_.add_argument("--set", action="append", default=[], metavar="NOTEBOOK.KEY=VALUE",
                         help="override a notebook parameter, e.g. 01_scaling.n=5 (repeatable)")
    figures_.add_argument("--force", action="store_true", help="run notebooks that are up to date too")
    figures_.add_argument("--compute", action="store_true",
                         help="compute missing or stale rows with the model; without it a committed preset "
                              "(configs/presets/*.yaml with a `committed:` block, e.g. cpu) is only drawn from its "
                              "rows, with no model call")
    figures_.add_argument("--out", metavar="DIR",
                         help="write the executed notebooks and figures under DIR instead of "
                              "results/<preset>/notebooks and figures/<preset>; the rows are still read from "
                              "results/<preset>")

    survey_ = verbs.add_parser("survey", help="write a survey with numbered citations from a source collection "
                              "(ExtAgents and the AutoSurvey baseline) and judge the two pairwise")
    survey_.set_defaults(handler=survey)
    add_survey_arguments(survey_)
    _engine_args(survey_, reasoning=True)

    report_ = verbs.add_parser("report", help="collect run files into one table")
    report_.set_defaults(handler=report)
    report_.add_argument("files", nargs="+", help="run files (JSONL) or folders holding them")
    report_.add_argument("--csv", help="also write the table to this CSV file")
    report_.add_argument("--versions", type=parse_pins, default={},
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


def ask(args: argparse.Namespace) -> int:
    if not args.question.strip():
        raise UserError("the question is empty")
    text = read_document(args.doc)
    names = method_names(args.method, allow_all=False)
    methods = [make_method(name, progress=True, **knobs) for name, knobs in knobs_for(names, given_knobs(args)).items()]
    task = Task(id="ask", question=args.question.strip(), knowledge=text, lang=args.lang)
    trace = _output_file(args.trace, "--trace") if args.trace else None
    with clients(EngineSettings.from_flags(args)) as (llm, reasoner):
        predictions = {m.name: m.run(task, llm, reasoner) for m in methods}
    if trace:
        write_trace(trace, task, args.doc, llm, predictions)
    if args.json:
        print(json.dumps({k: {"answer": p.answer, "rounds": p.rounds, "error": p.error, "usage": p.usage}
                          for k, p in predictions.items()}, ensure_ascii=False, indent=1))
    else:
        for name, prediction in predictions.items():
            print(prediction.summary(name))
    return 1 if any(p.error for p in predictions.values()) else 0


def _load(args: argparse.Namespace, tokenizer=None, **extra) -> list[Task]:
    return load_tasks(args.show if args.verb == "data" else args.dataset, args.input_tokens, n=args.n,
                      seed=args.seed, tokenizer=tokenizer, ids=args.ids,
                      **{**extra, **key_values(args.option, "--option")})


def data(args: argparse.Namespace) -> int:
    if not args.show:
        sizes = prepare()
        for part, size in sizes.items():
            print(f"data/{part}: {size / 1e6:.1f} MB")
        return 0
    show_tasks(_load(args), _output_file(args.out, "--out") if args.out else None)
    return 0


def infbench_plus(args: argparse.Namespace) -> int:
    with clients(EngineSettings.from_flags(args)) as (llm, _):
        extra = {"if_shorter": "whole"} if "if_shorter" in dataset_options(args.dataset) else {}
        tasks = _load(args, llm.tokenizer, **extra)
        result = infbench_plus_build(tasks, llm, args.out, args.segment_tokens, args.context_window,
                                     verify=not args.no_verify)
    print(f"kept {len(result['kept'])}, dropped {len(result['dropped'])} (answerable from one segment), "
          f"failed {len(result['failed'])} of {len(tasks)}; written to {args.out}")
    return 1 if result["failed"] else 0


def figures(args: argparse.Namespace) -> int:
    from .presets import notebook_overrides, render

    overrides = notebook_overrides(key_values(args.set, "--set"))
    only = [n.strip() for n in args.only.split(",") if n.strip()] if args.only else None
    for path in render(args.preset, only, overrides, force=args.force, compute=args.compute,
                       out=Path(args.out) if args.out else None):
        print(f"executed copy: {path}")
    return 0


def survey(args: argparse.Namespace) -> int:
    return survey_command(args, EngineSettings.from_flags(args))


def report(args: argparse.Namespace) -> int:
    from .runfile import check_versions, run_files
    from .tables import collect, markdown, write_csv  # pandas, scipy: only for tables

    check_versions(args.versions)
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
        if args.verb == "run" and args.config and not args.preset:
            runs = [from_config(parser, path, argv[1:]) for path in config_paths(args.config)]
            return run_experiments(runs)
        return args.handler(args)
    except (UserError, SetupError, ModelCallRefused, LLMError) as exc:
        print(f"extagents: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("extagents: interrupted", file=sys.stderr)
        return 130


def run(args: argparse.Namespace) -> int:
    if args.preset:
        from .presets import run_preset

        if args.dataset or args.config:
            raise UserError("--preset takes its cells from the preset's notebooks: give no --dataset or --config")
        return run_preset(args.preset, [n for n in args.only.split(",") if n], args.limit or 0)
    return run_experiments([args])


def setup(args: argparse.Namespace) -> int:
    for name in args.model or [DEFAULT_MODEL]:
        print(f"{name}: {ensure_model(name)}")
    return 0


def serve(args: argparse.Namespace) -> int:
    with LocalServer(args.model, context_window=args.context_window, persistent=True,
                     prompt_cache_mb=args.prompt_cache_mb) as server:
        server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
