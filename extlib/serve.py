"""The embedded engine: a real llama.cpp OpenAI-compatible server on 127.0.0.1, started, reused, stopped.

A server we start is ours to stop (on exit, Ctrl-C, an error, or our own death: the kernel signals it
when its parent dies). A healthy server that `extagents serve` keeps for the same model and window is
reused and left running; servers of other runs are never reused, since their owner may stop them.

Every server started writes its own config and log, named with its port, so two servers of one model and window
never mix their lines; a config goes with its server, the newest logs of a model stay for diagnosis.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from .errors import ModelCallRefused, SetupError, UserError
from .llm import LLMClient, offline_requested
from .models import DEFAULT_MODEL, cache_dir, ensure_model, get_spec
from .tokenizer import GGUFTokenizer

START_TIMEOUT_S = 300
LOGS_KEPT = 20  # per model, in cache_dir()/servers


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _healthy(base_url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def _die_with_parent() -> None:
    """In the child before exec: ask Linux to SIGTERM the server if this process dies, even by SIGKILL."""
    with contextlib.suppress(OSError, AttributeError):  # not Linux: atexit and `with` still stop it
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG


def _prune_logs(folder: Path, model: str, keep: int) -> None:
    """Only the `keep` newest server logs of `model` stay: every start writes a new one."""
    logs = []
    for log in folder.glob(f"{model}-ctx*-port*.log"):
        with contextlib.suppress(FileNotFoundError):  # another start pruning at the same time
            logs.append((log.stat().st_mtime, log))
    for _, old in sorted(logs, reverse=True)[keep:]:
        old.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


class LocalServer:
    """`with LocalServer("qwen2.5-1.5b", context_window=8192) as server: llm = server.client()`."""

    def __init__(self, model: str = DEFAULT_MODEL, context_window: int = 8192, threads: int | None = None,
                 progress: bool = True, persistent: bool = False, prompt_cache_mb: int = 0) -> None:
        get_spec(model)
        if context_window < 512:
            raise UserError(f"context_window={context_window} is too small for the server; use >= 512")
        if prompt_cache_mb < 0:
            raise UserError(f"prompt_cache_mb={prompt_cache_mb} must be >= 0 (0: no prompt-state cache)")
        self.model = model
        self.context_window = context_window
        self.threads = threads or os.cpu_count() or 1
        self.progress = progress
        self.persistent = persistent  # announce this server for reuse by other runs (`extagents serve`)
        # llama.cpp's KV state of recent prompts kept in RAM (extlib.llama_server), least recently used out first:
        # an agent whose chunk leads its prompt then computes only the new suffix in later rounds
        self.prompt_cache_mb = prompt_cache_mb
        self.process: subprocess.Popen | None = None
        self.port: int | None = None
        self.model_path: Path | None = None
        cache = f"-cache{prompt_cache_mb}mb" if prompt_cache_mb else ""
        # one per model and window: how `extagents serve` announces its server for reuse
        self._record = cache_dir() / "servers" / f"{model}-ctx{context_window}{cache}.json"
        self._config: Path | None = None  # the config of the server we started, removed when it stops

    @property
    def base_url(self) -> str:
        if self.port is None:
            raise RuntimeError("server not started; use `with LocalServer(...) as server:` or call start()")
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def model_id(self) -> str:
        """Cache identity: the weights' hash, so a restarted server on another port hits the same cache."""
        return f"{self.model}@{get_spec(self.model).sha256[:16]}"

    def server_files(self, port: int) -> tuple[Path, Path]:
        """(config, log) of this model and window's server on `port`: each server its own pair."""
        stem = self._record.name.removesuffix(".json")
        return (self._record.with_name(f"{stem}-port{port}.config.json"),
                self._record.with_name(f"{stem}-port{port}.log"))

    def start(self) -> LocalServer:
        if offline_requested():
            raise ModelCallRefused(f"a llama.cpp server for {self.model} was asked for while EXTAGENTS_OFFLINE is "
                                   "set: no model may be served or called then, and drawing committed rows never "
                                   "starts a server; computing is explicit: `extagents figures --preset <preset> "
                                   "--compute` or `make study`")
        self.model_path = ensure_model(self.model, progress=self.progress)
        if self._reuse():
            return self
        self._record.parent.mkdir(parents=True, exist_ok=True)
        _prune_logs(self._record.parent, self.model, LOGS_KEPT - 1)  # and this start's log makes LOGS_KEPT
        self.port = _free_port()
        config = {
            "host": "127.0.0.1",
            "port": self.port,
            "interrupt_requests": False,
            "models": [{
                "model": str(self.model_path),
                "model_alias": self.model,
                "n_ctx": self.context_window,
                "n_threads": self.threads,
                "n_threads_batch": self.threads,
                "n_batch": 512,
                "logits_all": False,  # 35% faster prefill; we never need per-token logits
                "verbose": False,
                "cache": self.prompt_cache_mb > 0,
                "cache_type": "ram",
                "cache_size": self.prompt_cache_mb << 20,
            }],
        }
        config_path, log_path = self.server_files(self.port)
        config_path.write_text(json.dumps(config))
        self._config = config_path
        if self.progress:
            print(f"starting llama.cpp server for {self.model} on 127.0.0.1:{self.port} (log: {log_path})",
                  file=sys.stderr)
        with open(log_path, "wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "extlib.llama_server", "--config_file", str(config_path)],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=_die_with_parent,
            )
        atexit.register(self.stop)  # also when a notebook kernel or script exits without `with`
        try:
            self._wait_healthy(log_path)
        except BaseException:  # Ctrl-C or a failed start: `__exit__` never runs for a failed `__enter__`
            self.stop()
            raise
        if self.persistent:
            self._record.write_text(json.dumps({"pid": self.process.pid, "port": self.port}))
        return self

    def _reuse(self) -> bool:
        try:
            record = json.loads(self._record.read_text())
        except (OSError, ValueError):
            return False
        if not _alive(record.get("pid", -1)):
            return False
        self.port = record["port"]
        if _healthy(self.base_url):
            if self.progress:
                print(f"reusing llama.cpp server for {self.model} at {self.base_url}", file=sys.stderr)
            return True
        self.port = None
        return False

    def _wait_healthy(self, log_path: Path) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                tail = log_path.read_text(errors="replace")[-2000:]
                raise SetupError(f"llama.cpp server exited with code {self.process.returncode}:\n{tail}")
            if _healthy(self.base_url):
                return
            time.sleep(0.5)
        self.stop()
        raise SetupError(f"llama.cpp server did not become healthy within {START_TIMEOUT_S}s; see {log_path}")

    def stop(self) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        if self.persistent:  # the record is only ever ours when we announced the server
            self._record.unlink(missing_ok=True)
        self._config.unlink(missing_ok=True)
        self._config = None
        self.process = None
        atexit.unregister(self.stop)

    def tokenizer(self) -> GGUFTokenizer:
        if self.model_path is None:
            self.model_path = ensure_model(self.model, progress=self.progress)
        return GGUFTokenizer(self.model_path)

    def client(self, **options) -> LLMClient:
        """An LLMClient for this server; llama.cpp's default repeat_penalty 1.1 changes answers, so 1.0."""
        options.setdefault("extra_body", {"repeat_penalty": 1.0})
        return LLMClient(self.base_url, model=self.model, model_id=self.model_id,
                         model_sha256=get_spec(self.model).sha256, api_key="local",
                         tokenizer=self.tokenizer(), **options)

    def serve_forever(self) -> None:
        if self.process is None:
            print(f"a server for {self.model} is already running at {self.base_url}", file=sys.stderr)
            return
        print(f"serving {self.model} at {self.base_url} (Ctrl-C to stop)", file=sys.stderr)
        self.process.wait()

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
