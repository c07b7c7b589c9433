"""`extagents ask | setup | serve | data | infbench-plus | run | report`: the methods on a document from the
shell, on the bundled model or any OpenAI-compatible endpoint; the benchmarks offline; experiments into run
files and one table. Bad input ends with one clear line on stderr and exit code 2."""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sqlite3
import sys
from dataclasses import asdict
from pathlib import Path

from .cache import ResponseCache
from .datasets import DATASETS, load_tasks, prepare
from .datasets import options as dataset_options
from .experiments import RunSpec, collect, markdown
from .experiments import run as run_run
from .infbench_plus import build as infbench_plus_build
from .llm import LLMClient, LLMError
from .methods import METHODS, make_method, run_sync
from .methods.extagents import MODES, RATINGS
from .models import DEFAULT_MODEL, MODELS, cache_dir, ensure_model
from .serve import LocalServer
from .tokenizer import GGUFTokenizer, load_tokenizer
from .trace import LANGS, Prediction, Task


class UserError(Exception):
    """Input the user can fix; printed without a traceback."""


def read_document(path: str) -> str:
    """The document as text: `-` reads stdin. Rejects missing, empty, binary and non-UTF-8 input."""
    if path == "-":
        data = sys.stdin.buffer.read()
        where = "stdin"
    else:
        file = Path(path)
        if not file.exists():
            raise UserError(f"document not found: {path}")
        if not file.is_file():
            raise UserError(f"not a regular file: {path}")
        data = file.read_bytes()
        where = path
    if not data.strip():
        raise UserError(f"the document is empty: {where}")
    if b"\x00" in data[:1 << 20]:
        raise UserError(f"{where} looks binary (it contains NUL bytes); give a plain UTF-8 text file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UserError(f"{where} is not valid UTF-8 (byte {exc.start}); convert it first, e.g. "
                        f"`iconv -f latin1 -t utf-8 {where} > doc.txt`") from exc
    return text


def _bounded(cast: type, low: float, high: float, what: str):
    """An argparse type: `cast` the text and check low <= value <= high, or say what was expected."""
    def parse(value: str):
        try:
            number = cast(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {value!r}") from None
        if not low <= number <= high:
            raise argparse.ArgumentTypeError(f"expected {what}, got {number}")
        return number
    return parse


_positive = _bounded(int, 1, float("inf"), "a positive integer")
_non_negative = _bounded(int, 0, float("inf"), "a non-negative integer")
_fraction = _bounded(float, 0.0, 1.0, "a number between 0 and 1")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="extagents", description=__doc__)
    verbs = parser.add_subparsers(dest="verb", required=True)

    ask = verbs.add_parser("ask", help="answer a question over a document of any length")
    ask.add_argument("--doc", required=True, help="the document (UTF-8 text file), or - for stdin")
    ask.add_argument("--question", required=True)
    ask.add_argument("--lang", choices=LANGS, default="en")
    ask.add_argument("--method", default="extagents",
                     help=f"one of {', '.join(METHODS)}, or a comma list (e.g. extagents,direct) to compare")
    ask.add_argument("--trace", help="write every agent call to this JSON file")
    ask.add_argument("--json", action="store_true", help="print the predictions as JSON")
    knobs = ask.add_argument_group("method knobs")
    knobs.add_argument("--chunk-tokens", type=_positive, default=2048, help="|d_i| (default 2048)")
    knobs.add_argument("--input-tokens", type=_positive, help="truncate the document to this many tokens")
    knobs.add_argument("--truncate", choices=("front", "middle"), default="middle")
    knobs.add_argument("--context-window", type=_positive, default=8192, help="L (default 8192)")
    knobs.add_argument("--rounds", type=_positive, help="T, synchronization rounds (default 5; LongAgent and "
                       "PARSER: 3)")
    knobs.add_argument("--no-gks", action="store_true", help="ablation: agents see only their own message")
    knobs.add_argument("--no-kar", action="store_true", help="ablation: reason over all messages at once")
    knobs.add_argument("--rating", choices=RATINGS, default="llm")
    knobs.add_argument("--exclusion", action="store_true", help="drop chunks that reply NO INFORMATION")
    knobs.add_argument("--mode", choices=MODES, default="paper")
    knobs.add_argument("--prompts", choices=("small", "paper"), default="small",
                       help="prompt set: tuned for small models, or the paper's Appendix E.3")
    knobs.add_argument("--variant", choices=("en", "zh", "hotpotqa"),
                       help="prompt variant (default: --lang)")
    knobs.add_argument("--grounding", type=_fraction, help="drop seeking replies whose new words are mostly not "
                       "in their chunk: the least share kept (default 0.75 with --prompts small, off with paper)")
    knobs.add_argument("--paragraphs", action="store_true", help="paragraph-aware chunks")
    knobs.add_argument("--overlap", type=_non_negative, default=0, help="token overlap of fixed chunks")
    knobs.add_argument("--concurrency", type=_positive, default=4, help="LLM calls in flight at once")
    _engine_args(ask.add_argument_group("engine"))

    setup = verbs.add_parser("setup", help="fetch, assemble and verify bundled models")
    setup.add_argument("--model", choices=list(MODELS), action="append",
                       help=f"repeatable (default {DEFAULT_MODEL})")

    serve = verbs.add_parser("serve", help="run the bundled model's server in the foreground for reuse")
    serve.add_argument("--model", choices=list(MODELS), default=DEFAULT_MODEL)
    serve.add_argument("--context-window", type=_positive, default=8192)

    data = verbs.add_parser("data", help="fetch and index every offline dataset (hash-verified), or show tasks")
    data.add_argument("--show", choices=list(DATASETS), help="print tasks of this dataset instead")
    _task_args(data)
    data.add_argument("--out", help="with --show: write the tasks (knowledge included) to this JSONL file")

    plus = verbs.add_parser("infbench-plus", help="∞Bench+ construction: drop samples one segment answers")
    plus.add_argument("--dataset", required=True, choices=list(DATASETS))
    _task_args(plus)
    plus.add_argument("--segment-tokens", type=_positive, default=8192, help="segment length (paper: 8k)")
    plus.add_argument("--out", required=True, help="JSON file of kept ids and evidence (a .log.jsonl beside it "
                      "lets an interrupted run resume)")
    plus.add_argument("--no-verify", action="store_true", help="take every Yes at its word (strong judges); by "
                      "default a Yes counts only if its quote is the segment's text and holds the answer")
    plus.add_argument("--context-window", type=_positive, default=8192)
    plus.add_argument("--concurrency", type=_positive, default=4)
    _engine_args(plus)

    run_ = verbs.add_parser("run", help="methods x input lengths on a dataset; one resumable JSONL file per setting")
    run_.add_argument("--dataset", required=True, choices=list(DATASETS))
    run_.add_argument("--method", default="extagents,direct", help=f"comma list of {', '.join(METHODS)}, or all")
    run_.add_argument("--lengths", required=True, help="comma list of input lengths in tokens, e.g. 2000,8000")
    run_.add_argument("--n", type=_positive, default=20)
    run_.add_argument("--seed", type=int, default=0)
    run_.add_argument("--ids", help="a JSON file of ids to restrict the questions to")
    run_.add_argument("--limit", type=_positive, help="answer only the first LIMIT of the n questions now (a staged "
                      "run: raise it later and the same run files continue)")
    run_.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="a dataset option")
    run_.add_argument("--knob", action="append", default=[], metavar="KEY=VALUE",
                      help="a method knob, e.g. chunk_tokens=512, rounds=3 (each method takes the ones it has)")
    run_.add_argument("--out", default="runs", help="folder of run files (default runs/)")
    run_.add_argument("--context-window", type=_positive, default=8192)
    run_.add_argument("--concurrency", type=_positive, default=4)
    _engine_args(run_)

    report = verbs.add_parser("report", help="collect run files into one table")
    report.add_argument("files", nargs="+", help="run files (JSONL) or folders holding them")
    report.add_argument("--csv", help="also write the table to this CSV file")
    return parser


def _task_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--input-tokens", type=_positive, default=8000, help="knowledge length (default 8000)")
    parser.add_argument("--n", type=_positive, help="questions to draw (default: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ids", help="a JSON file of ids (e.g. an ∞Bench+ output) to restrict the questions to")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="a dataset option, e.g. position=0.1, order=reverse, path=longbook_qa_eng.jsonl")


def _key_values(pairs: list[str]) -> dict:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UserError(f"--option {pair!r}: write KEY=VALUE")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value  # a bare word such as reverse or a path
    return out


def _engine_args(engine: argparse._ArgumentGroup | argparse.ArgumentParser) -> None:
    engine.add_argument("--base-url", help="an OpenAI-compatible endpoint (default: the bundled local model)")
    engine.add_argument("--model", help="model name at --base-url or the OpenAI API; a bundled model's name "
                        "(e.g. qwen2.5-0.5b) without --base-url serves that bundled model")
    engine.add_argument("--reasoning-base-url", help="endpoint of the reasoning agent (default: --base-url)")
    engine.add_argument("--reasoning-model", help="model of the reasoning agent (default: --model); a bundled "
                        "model's name without --reasoning-base-url serves it locally")
    engine.add_argument("--local-model", choices=list(MODELS), default=DEFAULT_MODEL,
                        help=f"bundled model to serve when no --base-url is given (default {DEFAULT_MODEL})")
    engine.add_argument("--tokenizer", help="gguf:PATH, hf:PATH/tokenizer.json or tiktoken:NAME "
                        "(default: the serving model's own; for remote endpoints the bundled Qwen2.5 vocab)")
    engine.add_argument("--temperature", type=float, default=0.0)
    engine.add_argument("--no-cache", action="store_true", help="bypass the persistent response cache")


def _methods(args: argparse.Namespace) -> list:
    names = [m.strip() for m in args.method.split(",") if m.strip()]
    if not names:
        raise UserError(f"--method is empty; choose from: {', '.join(METHODS)}")
    knobs = dict(chunk_tokens=args.chunk_tokens, context_window=args.context_window, input_tokens=args.input_tokens,
                 truncate=args.truncate, paragraphs=args.paragraphs, overlap=args.overlap, gks=not args.no_gks,
                 kar=not args.no_kar, rating=args.rating, exclusion=args.exclusion, mode=args.mode,
                 prompt_set=args.prompts, variant=args.variant, progress=True)
    knobs.update({k: v for k, v in (("rounds", args.rounds), ("grounding", args.grounding)) if v is not None})
    return [make_method(name, **knobs) for name in names]


async def _check_endpoint(llm: LLMClient) -> None:
    """Fail fast with a clear message instead of retrying an unreachable server or an unknown model."""
    import openai

    try:
        served = await llm.list_models()
    except openai.APIConnectionError as exc:
        raise UserError(f"cannot reach {llm.base_url or 'the OpenAI API'}: {exc}; is the server running?") from exc
    except openai.AuthenticationError as exc:
        raise UserError("the endpoint rejected the API key; set OPENAI_API_KEY") from exc
    except openai.APIStatusError:
        return  # some servers do not list models; the first call will tell
    if served and llm.model not in served:
        raise UserError(f"model {llm.model!r} is not served at {llm.base_url}; it serves: {', '.join(served)}")


def _remote_client(base_url: str | None, model: str | None, args, tokenizer, cache) -> LLMClient:
    if not model:
        raise UserError("--model is required with --base-url (the name the server serves)")
    llm = LLMClient(base_url, model, tokenizer=tokenizer, concurrency=args.concurrency,
                    temperature=args.temperature, cache=cache)
    run_sync(_check_endpoint(llm))
    return llm


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
    methods = _methods(args)
    task = Task(id="ask", question=args.question.strip(), knowledge=text, lang=args.lang)
    cache = None if args.no_cache else ResponseCache(cache_dir() / "responses.sqlite")
    with contextlib.ExitStack() as stack:
        llm = _main_client(args, stack, cache)
        reasoner = None
        if args.reasoning_model in MODELS and not args.reasoning_base_url:  # a second bundled model
            second = stack.enter_context(LocalServer(args.reasoning_model, context_window=args.context_window))
            reasoner = second.client(concurrency=args.concurrency, temperature=args.temperature, cache=cache)
        elif args.reasoning_base_url or args.reasoning_model:
            reasoner = _remote_client(args.reasoning_base_url or args.base_url,
                                      args.reasoning_model or args.model, args, llm.tokenizer, cache)
        predictions = {m.name: m.run(task, llm, reasoner) for m in methods}
    if args.trace:
        Path(args.trace).write_text(json.dumps({"question": task.question, "document": args.doc,
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


def _main_client(args: argparse.Namespace, stack: contextlib.ExitStack, cache: ResponseCache | None) -> LLMClient:
    """The endpoint named by --base-url/--model, or a bundled model served for the length of `stack`."""
    if args.base_url or (args.model and args.model not in MODELS):
        llm = _remote_client(args.base_url, args.model, args, None, cache)
        llm.tokenizer = load_tokenizer(args.tokenizer) if args.tokenizer else _default_remote_tokenizer(args)
        return llm
    local = args.model if args.model in MODELS else args.local_model
    server = stack.enter_context(LocalServer(local, context_window=args.context_window))
    llm = server.client(concurrency=args.concurrency, temperature=args.temperature, cache=cache)
    if args.tokenizer:
        llm.tokenizer = load_tokenizer(args.tokenizer)
    return llm


def _load(args: argparse.Namespace, tokenizer=None, **extra) -> list[Task]:
    return load_tasks(args.show if args.verb == "data" else args.dataset, args.input_tokens, n=args.n,
                      seed=args.seed, tokenizer=tokenizer, ids=args.ids,
                      **{**extra, **_key_values(args.option)})


def data(args: argparse.Namespace) -> int:
    if not args.show:
        sizes = prepare()
        for part, size in sizes.items():
            print(f"data/{part}: {size / 1e6:.1f} MB")
        return 0
    tasks = _load(args)
    with open(args.out, "w", encoding="utf-8") if args.out else contextlib.nullcontext() as sink:
        for task in tasks:
            gold = task.meta.get("gold", [])
            print(f"{task.id}  [{task.lang}, {task.meta.get('input_tokens')} tokens]  {task.question}\n"
                  f"  answers: {task.answers}\n  evidence: {json.dumps(gold, ensure_ascii=False)}")
            if sink:
                sink.write(json.dumps(asdict(task), ensure_ascii=False) + "\n")
    return 0


def infbench_plus(args: argparse.Namespace) -> int:
    cache = None if args.no_cache else ResponseCache(cache_dir() / "responses.sqlite")
    with contextlib.ExitStack() as stack:
        llm = _main_client(args, stack, cache)
        extra = {"if_shorter": "whole"} if "if_shorter" in dataset_options(args.dataset) else {}
        tasks = _load(args, llm.tokenizer, **extra)
        result = infbench_plus_build(tasks, llm, args.out, args.segment_tokens, args.context_window,
                                     verify=not args.no_verify)
    print(f"kept {len(result['kept'])}, dropped {len(result['dropped'])} (answerable from one segment), "
          f"failed {len(result['failed'])} of {len(tasks)}; written to {args.out}")
    return 1 if result["failed"] else 0


def run_experiments(args: argparse.Namespace) -> int:
    names = list(METHODS) if args.method == "all" else [m.strip() for m in args.method.split(",") if m.strip()]
    unknown = [m for m in names if m not in METHODS]
    if unknown or not names:
        raise UserError(f"unknown method(s) {unknown or '(none)'}; choose from: {', '.join(METHODS)}, or all")
    try:
        lengths = [int(x) for x in args.lengths.split(",") if x.strip()]
    except ValueError:
        raise UserError(f"--lengths {args.lengths!r}: give comma-separated token counts, e.g. 2000,8000") from None
    if not lengths or min(lengths) <= 0:
        raise UserError("--lengths needs positive token counts")
    knobs = _key_values(args.knob)
    cache = None if args.no_cache else ResponseCache(cache_dir() / "responses.sqlite")
    files = []
    with contextlib.ExitStack() as stack:
        llm = _main_client(args, stack, cache)
        for length in lengths:
            tasks = load_tasks(args.dataset, length, n=args.n, seed=args.seed, tokenizer=llm.tokenizer, ids=args.ids,
                               **_key_values(args.option))[:args.limit]
            for name in names:
                spec = RunSpec(args.dataset, name, length, args.n, args.seed, llm.model, args.context_window, knobs)
                files.append(run_run(spec, tasks, llm, Path(args.out)))
    table = collect(files)
    print(markdown(table))
    return 1 if any(r["failed"] for r in table) else 0


def report(args: argparse.Namespace) -> int:
    paths = []
    for item in args.files:
        path = Path(item)
        if path.is_dir():
            paths += sorted(path.rglob("*.jsonl"))
        elif path.is_file():
            paths.append(path)
        else:
            raise UserError(f"no such run file or folder: {item}")
    table = collect(paths)
    if not table:
        raise UserError("no run rows in the given files")
    print(markdown(table))
    if args.csv:
        import csv

        with open(args.csv, "w", newline="", encoding="utf-8") as f:
            columns = [k for k in table[0] if k not in ("measures", "f1_by_id")]
            writer = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
            writer.writeheader()
            writer.writerows(table)
    return 0


def _default_remote_tokenizer(args: argparse.Namespace) -> GGUFTokenizer:
    print(f"note: counting tokens with the bundled {args.local_model} vocabulary; pass --tokenizer for the "
          "serving model's own", file=sys.stderr)
    return GGUFTokenizer(ensure_model(args.local_model))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # SIGTERM unwinds like Ctrl-C, so a server we started is stopped on the way out
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
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
            return run_experiments(args)
        if args.verb == "report":
            return report(args)
        if args.verb == "serve":
            with LocalServer(args.model, context_window=args.context_window, persistent=True) as server:
                server.serve_forever()
            return 0
    except (UserError, ValueError, LLMError, RuntimeError, OSError, sqlite3.Error) as exc:
        print(f"extagents: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("extagents: interrupted", file=sys.stderr)
        return 130
    return 2


if __name__ == "__main__":
    sys.exit(main())
