"""Bad input ends with one clear line and exit code 2, before any model is loaded; so do a machine to set up and a
model call that failed for good. Any other exception is a bug: it is not caught, so it shows its traceback."""

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from extlib.errors import ModelCallRefused, SetupError
from extlib.llm import LLMError

from .conftest import DATA

DOC = str(DATA / "harbour.txt")


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "extlib.cli", *args], capture_output=True, text=True, timeout=120)


@pytest.fixture
def files(tmp_path):
    (tmp_path / "empty.txt").write_text("  \n")
    (tmp_path / "binary.bin").write_bytes(b"\x7fELF\x00\x01\x02" * 50)
    (tmp_path / "latin1.txt").write_bytes("caf\xe9 au lait".encode("latin-1"))
    return tmp_path


@pytest.mark.parametrize("args, message", [
    (["--doc", "missing.txt", "--question", "q?"], "document not found"),
    (["--doc", "{tmp}/empty.txt", "--question", "q?"], "the document is empty"),
    (["--doc", "{tmp}/binary.bin", "--question", "q?"], "looks binary"),
    (["--doc", "{tmp}/latin1.txt", "--question", "q?"], "not valid UTF-8"),
    (["--doc", "{tmp}", "--question", "q?"], "not a regular file"),
    (["--doc", DOC, "--question", "   "], "the question is empty"),
    (["--doc", DOC, "--question", "q?", "--chunk-tokens", "8192"], "must be below context_window"),
    (["--doc", DOC, "--question", "q?", "--method", "magic"], "unknown method"),
    (["--doc", DOC, "--question", "q?", "--base-url", "http://127.0.0.1:9/v1"], "--model is required"),
    (["--doc", DOC, "--question", "q?", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"], "cannot reach"),
])
def test_bad_input_is_a_clear_error(files, args, message):
    result = cli("ask", *[a.replace("{tmp}", str(files)) for a in args])
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("flag, value", [("--chunk-tokens", "0"), ("--rounds", "-1"), ("--context-window", "8k"),
                                         ("--rating", "vibes"), ("--truncate", "end"), ("--lang", "fr"),
                                         ("--grounding", "1.5"), ("--overlap", "-3")])
def test_invalid_numbers_and_choices_are_rejected_by_the_parser(flag, value):
    result = cli("ask", "--doc", DOC, "--question", "q?", flag, value)
    assert result.returncode == 2
    assert flag in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("args, message", [
    (["--lengths", "0"], "give positive token counts"),
    (["--lengths", "2k"], "comma-separated token counts"),
    (["--lengths", "2000", "--method", ""], "unknown method(s) (none given)"),
    (["--lengths", "2000", "--method", "extagents,magic"], "unknown method(s) ['magic']"),
    (["--lengths", "2000", "--ids", "{tmp}/missing.json"], "ids file not found"),
    (["--lengths", "2000", "--ids", "{tmp}/broken.json"], "broken.json is not JSON"),
    (["--lengths", "2000", "--option", "position"], "--option 'position': write KEY=VALUE"),
    (["--lengths", "2000", "--option", "depth=0.5"], "hotpotqa has no option(s) ['depth']"),
    (["--lengths", "2000", "--method", "direct,drag", "--rounds", "3"],
     "no method of direct, drag has the knob rounds"),
    (["--lengths", "2000", "--chunk-tokens", "0"], "argument --chunk-tokens: expected a positive integer"),
])
def test_run_rejects_bad_settings_before_any_model_is_loaded(files, args, message):
    (files / "broken.json").write_text("[\"a\", ")
    result = cli("run", "--dataset", "hotpotqa", *[a.replace("{tmp}", str(files)) for a in args])
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert message in result.stderr, result.stderr


def test_ask_rejects_a_knob_none_of_its_methods_has():
    result = cli("ask", "--doc", DOC, "--question", "q?", "--method", "direct", "--rating", "order")
    assert result.returncode == 2 and "no method of direct has the knob rating" in result.stderr


@pytest.mark.parametrize("text, message", [
    ("dataset: hotpotqa\nlenghts: [2000]\n", "exp.yaml: unknown setting 'lenghts'"),
    ("dataset: hotpotqa\nlengths: [2000]\nknobs: {chunk_tokenz: 512}\n", "exp.yaml: unknown knob(s) chunk_tokenz"),
    ("dataset: hotpotqa\nlengths: [2000]\nknobs: {chunk_tokens: -5}\n",
     "exp.yaml: argument --chunk-tokens: expected a positive"),
    ("dataset: hotpotqa\nlengths: [0]\n", "--lengths '0': give positive token counts"),
    ("dataset: [unclosed\n", "exp.yaml is not valid YAML"),
    ("- just a list\n", "exp.yaml: expected a mapping of settings"),
])
def test_a_config_file_is_checked_like_a_command_line_and_named_in_errors(tmp_path, text, message):
    config = tmp_path / "exp.yaml"
    config.write_text(text)
    result = cli("run", "--config", str(config))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert message in result.stderr, result.stderr


def test_a_config_file_becomes_the_same_flags_and_the_command_line_wins(tmp_path):
    import argparse

    from extlib.cli import build_parser
    from extlib.configs import config_argv

    config = tmp_path / "exp.yaml"
    config.write_text("dataset: hotpotqa\nmethod: all\nlengths: [2000, 8000]\nn: 20\nno_cache: true\n"
                      "knobs: {context_window: 2048, chunk_tokens: 512, rating: order, gks: false}\n"
                      "options: {}\n")
    parser = build_parser()
    run = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["run"]
    argv = config_argv(str(config), run)
    args = parser.parse_args(["run", *argv, "--chunk-tokens", "256"])
    assert (args.dataset, args.method, args.lengths, args.n, args.no_cache) == ("hotpotqa", "all", "2000,8000", 20,
                                                                                 True)
    assert (args.context_window, args.chunk_tokens, args.rating, args.gks) == (2048, 256, "order", False)


def test_the_checked_in_experiment_configs_parse():
    import argparse

    from extlib.cli import build_parser
    from extlib.configs import config_argv, config_paths

    parser = build_parser()
    run = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["run"]
    configs = sorted((DATA.parent.parent / "configs").glob("*.yaml"))
    assert configs
    for config in configs:
        for experiment in config_paths(str(config)):
            args = parser.parse_args(["run", *config_argv(experiment, run)])
            assert args.dataset and args.lengths
    assert [Path(p).name for p in config_paths(str(configs[0].parent / "beyond_window.yaml"))] == [
        "hotpotqa-longdoc.yaml", "zh-longdoc.yaml", "hotpotqa.yaml"]


def test_a_config_of_experiments_is_their_cells_in_one_run_and_a_cap_stops_a_length_early(tmp_path):
    import argparse

    from extlib.cli import build_parser
    from extlib.configs import config_argv, config_paths, experiment_cells

    (tmp_path / "long.yaml").write_text("dataset: hotpotqa-longdoc\nmethod: extagents,direct\nlengths: [4096, 8192]\n"
                                        "n: 30\nseed: 2\ncap: {4096: 15}\nknobs: {context_window: 1024}\n")
    (tmp_path / "short.yaml").write_text("dataset: hotpotqa\nmethod: direct\nlengths: [2000]\nn: 30\nseed: 2\n"
                                         "knobs: {context_window: 2048}\n")
    (tmp_path / "both.yaml").write_text("experiments: [long.yaml, short.yaml]\n")
    parser = build_parser()
    run = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["run"]
    cells = [cell for path in config_paths(str(tmp_path / "both.yaml"))
             for cell in experiment_cells(parser.parse_args(["run", *config_argv(path, run)]))]
    assert [(c.dataset, c.method, c.input_tokens, c.cap, c.context_window) for c in cells] == [
        ("hotpotqa-longdoc", "extagents", 4096, 15, 1024), ("hotpotqa-longdoc", "direct", 4096, 15, 1024),
        ("hotpotqa-longdoc", "extagents", 8192, 0, 1024), ("hotpotqa-longdoc", "direct", 8192, 0, 1024),
        ("hotpotqa", "direct", 2000, 0, 2048)]


@pytest.mark.parametrize("text, message", [
    ("experiments: [a.yaml]\nn: 3\n", "experiments: is a list of experiment files"),
    ("experiments: []\n", "experiments: is a list of experiment files"),
    ("experiments: [nested.yaml]\n", "nested.yaml lists experiments itself"),
    ("experiments: [missing.yaml]\n", "cannot read --config"),
])
def test_a_config_of_experiments_that_is_not_one_is_named(tmp_path, text, message):
    (tmp_path / "nested.yaml").write_text("experiments: [a.yaml]\n")
    (tmp_path / "both.yaml").write_text(text)
    result = cli("run", "--config", str(tmp_path / "both.yaml"))
    assert result.returncode == 2 and message in result.stderr, result.stderr


def test_a_cap_on_a_length_the_run_does_not_have_is_named(tmp_path):
    result = cli("run", "--dataset", "hotpotqa", "--lengths", "2000", "--cap", "4096=15")
    assert result.returncode == 2 and "--cap names lengths [4096]" in result.stderr, result.stderr
    result = cli("run", "--dataset", "hotpotqa", "--lengths", "2000", "--cap", "2000:15")
    assert result.returncode == 2 and "write LENGTH=QUESTIONS pairs" in result.stderr, result.stderr


@pytest.fixture
def main():
    """`extlib.cli.main` in this process, with the SIGTERM handler it installs put back afterwards."""
    from extlib.cli import main

    handler = signal.getsignal(signal.SIGTERM)
    yield main
    signal.signal(signal.SIGTERM, handler)


@pytest.mark.parametrize("args, message", [
    (["--doc", "missing.txt", "--question", "q?"], "document not found: missing.txt"),
    (["--doc", DOC, "--question", "q?", "--method", "magic"], "unknown method(s) ['magic']"),
])
def test_a_user_error_is_one_line_and_exit_code_2(main, capsys, args, message):
    assert main(["ask", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("extagents: error: ") and message in err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("bug", [KeyError("row"), ZeroDivisionError("division by zero"),
                                 ValueError("a plain ValueError"), RuntimeError("impossible"), OSError("disk")])
def test_a_bug_is_not_swallowed(main, capsys, monkeypatch, bug):
    def report(args):
        raise bug

    monkeypatch.setattr("extlib.cli.report", report)
    with pytest.raises(type(bug)) as raised:
        main(["report", "runs"])
    assert raised.value is bug
    assert "extagents: error" not in capsys.readouterr().err


def test_a_bug_shows_its_traceback_and_exit_code_1():
    code = ("import sys, extlib.cli as cli\n"
            "def report(args): return {}['row']\n"
            "cli.report = report\n"
            "sys.exit(cli.main(['report', 'runs']))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert "Traceback" in result.stderr and "KeyError: 'row'" in result.stderr
    assert "extagents: error" not in result.stderr


@pytest.mark.parametrize("error, line", [
    (SetupError("could not download part 1: offline"), "could not download part 1: offline"),
    (ModelCallRefused("no model call here: compute with --compute"), "no model call here: compute with --compute"),
    (LLMError("retries-exhausted", "APITimeoutError after 3 attempts"),
     "retries-exhausted: APITimeoutError after 3 attempts"),
])
def test_the_machine_and_a_failed_model_call_are_one_line_and_exit_code_2(main, capsys, monkeypatch, error, line):
    def ensure_model(name):
        raise error

    monkeypatch.setattr("extlib.cli.ensure_model", ensure_model)
    assert main(["setup"]) == 2
    assert capsys.readouterr().err == f"extagents: error: {line}\n"


@pytest.mark.parametrize("flags, compute, out", [([], False, None),
                                                  (["--compute", "--out", "elsewhere/d"], True, Path("elsewhere/d"))])
def test_figures_passes_compute_and_out_to_render(main, capsys, monkeypatch, flags, compute, out):
    calls = []

    def render(preset, only=None, overrides=None, **options):
        calls.append((preset, only, overrides, options))
        return [Path("executed.ipynb")]

    monkeypatch.setattr("extlib.presets.render", render)
    assert main(["figures", "--preset", "cpu", "--only", "01_scaling", *flags]) == 0
    assert calls == [("cpu", ["01_scaling"], {}, {"force": False, "compute": compute, "out": out})]
    assert "executed copy: executed.ipynb" in capsys.readouterr().out


def test_every_verb_has_its_own_handler_and_the_command_line_stays_thin():
    """Parsing only: each verb hands its flags to one function, and cli.py with cli_flags.py stays within the 445
    lines that cli.py alone had before the experiments' logic moved to the library (issue 43)."""
    import argparse

    from extlib import cli

    verbs = next(a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices
    handlers = {name: verb.get_default("handler") for name, verb in verbs.items()}
    assert all(callable(h) for h in handlers.values()) and len(set(handlers.values())) == len(handlers)
    extlib = Path(cli.__file__).parent
    assert sum(len((extlib / f).read_text().splitlines()) for f in ("cli.py", "cli_flags.py")) <= 445
