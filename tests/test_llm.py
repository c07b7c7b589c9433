import asyncio
import json

import httpx
import openai
import pytest

from extlib import LLMError, ResponseCache
from extlib.testing import scripted_client


def _status_error(cls, code):
    request = httpx.Request("POST", "http://x/v1/chat/completions")
    return cls("boom", response=httpx.Response(code, request=request), body=None)


def test_retries_connection_errors_then_succeeds():
    calls = []

    def flaky(prompt):
        calls.append(prompt)
        if len(calls) < 3:
            raise openai.APIConnectionError(request=None)
        return "ok"
    llm = scripted_client(flaky, max_retries=4)
    done = asyncio.run(llm.complete("hi"))
    assert done.text == "ok" and done.attempts == 3 and len(calls) == 3


@pytest.mark.parametrize("error", [
    lambda: openai.APIConnectionError(request=None),
    lambda: _status_error(openai.RateLimitError, 429),
    lambda: _status_error(openai.InternalServerError, 503),
])
def test_retries_are_bounded_then_a_typed_error(error):
    calls = []

    def down(prompt):
        calls.append(prompt)
        raise error()
    llm = scripted_client(down, max_retries=2)
    with pytest.raises(LLMError) as info:
        asyncio.run(llm.complete("hi"))
    assert info.value.kind == "retries-exhausted" and len(calls) == 3


@pytest.mark.parametrize("cls, code, kind", [
    (openai.NotFoundError, 404, "not-found"), (openai.BadRequestError, 400, "bad-request"),
    (openai.AuthenticationError, 401, "auth"),
])
def test_client_errors_are_not_retried(cls, code, kind):
    calls = []

    def reject(prompt):
        calls.append(prompt)
        raise _status_error(cls, code)
    llm = scripted_client(reject, max_retries=5)
    with pytest.raises(LLMError) as info:
        asyncio.run(llm.complete("hi"))
    assert info.value.kind == kind and len(calls) == 1


def test_concurrency_is_bounded():
    llm = scripted_client(lambda p: "x", delay_s=0.01, concurrency=3)

    async def many():
        return await asyncio.gather(*[llm.complete(f"q{i}") for i in range(20)])
    assert len(asyncio.run(many())) == 20
    assert llm._client.max_in_flight == 3


def test_cache_answers_repeated_calls_and_keys_on_sampling_parameters(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    llm = scripted_client(lambda p: p.upper(), cache=cache)
    first = asyncio.run(llm.complete("hello", max_tokens=10))
    again = asyncio.run(llm.complete("hello", max_tokens=10))
    other = asyncio.run(llm.complete("hello", max_tokens=11))
    assert (first.cache_hit, again.cache_hit, other.cache_hit) == (False, True, False)
    assert again.text == "HELLO" and again.prompt_tokens == first.prompt_tokens
    assert len(llm._client.prompts) == 2
    # a new client (a new process, a restarted server) with the same model identity hits the same cache
    fresh = scripted_client(lambda p: "different", cache=ResponseCache(tmp_path / "c.sqlite"))
    assert asyncio.run(fresh.complete("hello", max_tokens=10)).text == "HELLO"
    assert asyncio.run(scripted_client(lambda p: "nc").complete("hello", max_tokens=10)).text == "nc"


def test_cache_key_changes_with_model_temperature_and_stop_strings(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    llm = scripted_client(lambda p: p.upper(), cache=cache)
    base = asyncio.run(llm.complete("hello", max_tokens=10))
    variants = [llm.complete("hello", max_tokens=10, temperature=0.7),
                llm.complete("hello", max_tokens=10, stop=["</search>"]),
                llm.complete("hello", max_tokens=10, stop=["</answer>"]),
                scripted_client(lambda p: "other model", cache=cache, model_id="another@model").complete(
                    "hello", max_tokens=10)]
    assert not base.cache_hit and not any(asyncio.run(v).cache_hit for v in variants)
    assert asyncio.run(llm.complete("hello", max_tokens=10, stop=["</search>"])).cache_hit  # the same again: a hit


def test_failed_calls_are_not_cached(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    state = {"down": True}

    def sometimes(prompt):
        if state["down"]:
            raise openai.APIConnectionError(request=None)
        return "up"
    llm = scripted_client(sometimes, cache=cache, max_retries=0)
    with pytest.raises(LLMError):
        asyncio.run(llm.complete("q"))
    state["down"] = False
    assert asyncio.run(llm.complete("q")).text == "up" and len(cache) == 1


def test_api_key_is_never_shown(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-123")
    cache = ResponseCache(tmp_path / "c.sqlite")
    llm = scripted_client(lambda p: "ok", cache=cache, api_key=None)
    asyncio.run(llm.complete("q"))
    assert "sk-secret" not in repr(llm)
    rows = cache._connect().execute("SELECT key, value FROM responses").fetchall()
    assert "sk-secret" not in json.dumps(rows)


def test_invalid_client_settings_are_rejected():
    with pytest.raises(ValueError, match="concurrency"):
        scripted_client(lambda p: "", concurrency=0)
    with pytest.raises(ValueError, match="max_retries"):
        scripted_client(lambda p: "", max_retries=-1)


@pytest.fixture
def stub_server():
    """An HTTP server answering every chat completion with "pong" and llama.cpp-style usage and timings."""
    import http.server
    import threading

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            reply = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                                "choices": [{"index": 0, "finish_reason": "stop",
                                             "message": {"role": "assistant", "content": "pong"}}],
                                "usage": {"prompt_tokens": 7, "completion_tokens": 1, "total_tokens": 8,
                                          "prompt_tokens_details": {"cached_tokens": 3},
                                          "timings": {"prompt_ms": 250.0, "predicted_ms": 40}}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/v1"
    server.shutdown()


def test_a_real_openai_client_works_across_event_loops_and_reads_usage(stub_server):
    """Each `run` brings its own event loop, and connections must not leak from one loop to the next (they would
    fail and be retried)."""
    from extlib import LLMClient

    llm = LLMClient(stub_server, "stub", max_retries=0)
    for _ in range(3):
        done = asyncio.run(llm.complete("ping"))
        assert (done.text, done.attempts, done.prompt_tokens, done.cached_tokens) == ("pong", 1, 7, 3)
        assert (done.prefill_seconds, done.generation_seconds) == (0.25, 0.04)


def test_run_sync_closes_the_connections_its_loop_opened(stub_server):
    """Left open, an httpx pool closes itself when collected, on a loop that is gone, and prints a traceback."""
    from extlib import LLMClient
    from extlib.methods import run_sync

    llm = LLMClient(stub_server, "stub", max_retries=0)

    async def call() -> tuple[str, object]:
        return (await llm.complete("ping")).text, llm._connection()[0]

    for _ in range(2):
        text, client = run_sync(call())
        assert text == "pong" and client.is_closed()


def test_sampled_calls_with_their_own_seeds_are_each_answered_and_cached_apart(tmp_path):
    replies = iter(["first sample", "second sample"])
    llm = scripted_client(lambda prompt: next(replies), cache=ResponseCache(tmp_path / "c.sqlite"))
    answers = [asyncio.run(llm.complete("Judge these.", temperature=1.0, seed=seed)).text for seed in (0, 1, 0, 1)]
    assert answers == ["first sample", "second sample", "first sample", "second sample"]
    assert len(llm._client.prompts) == 2  # the repeats came from the cache, each seed's own reply
