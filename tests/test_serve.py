"""Local servers: each its own config and log, the newest logs kept, and none started while offline."""

import os

import pytest

from extlib import LocalServer, serve
from extlib.errors import ModelCallRefused

from .conftest import TEST_MODEL


def test_two_servers_of_one_model_and_window_get_their_own_config_and_log():
    server = LocalServer(TEST_MODEL, context_window=1024, progress=False)
    first, second = server.server_files(41234), server.server_files(41235)
    assert [p.name for p in first] == ["qwen2.5-0.5b-ctx1024-port41234.config.json",
                                       "qwen2.5-0.5b-ctx1024-port41234.log"]
    assert set(first).isdisjoint(second)
    assert server._record.name == "qwen2.5-0.5b-ctx1024.json"  # the record for reuse stays per model and window
    cached = LocalServer(TEST_MODEL, context_window=1024, prompt_cache_mb=64, progress=False)
    assert cached.server_files(41234)[1].name == "qwen2.5-0.5b-ctx1024-cache64mb-port41234.log"


def test_only_the_newest_logs_of_a_model_are_kept(tmp_path):
    for i in range(25):
        log = tmp_path / f"{TEST_MODEL}-ctx1024-port{40000 + i}.log"
        log.write_text("")
        os.utime(log, (1_000_000 + i, 1_000_000 + i))
    other = tmp_path / "qwen2.5-1.5b-ctx1024-port1.log"
    other.write_text("")
    serve._prune_logs(tmp_path, TEST_MODEL, serve.LOGS_KEPT - 1)
    left = sorted(p.name for p in tmp_path.glob(f"{TEST_MODEL}-*.log"))
    assert left == [f"{TEST_MODEL}-ctx1024-port{40000 + i}.log" for i in range(6, 25)]
    assert other.exists()  # another model's logs are its own to prune


@pytest.mark.parametrize("value", ["1", "yes"])
def test_no_server_starts_while_offline(monkeypatch, value):
    def no_model(*args, **kwargs):
        raise AssertionError("an offline start must not even look for the model")

    monkeypatch.setattr(serve, "ensure_model", no_model)
    monkeypatch.setenv("EXTAGENTS_OFFLINE", value)
    server = LocalServer(TEST_MODEL, context_window=1024, progress=False)
    with pytest.raises(ModelCallRefused, match="drawing committed rows never starts a server") as refused:
        server.start()
    assert "extagents figures --preset <preset> --compute" in str(refused.value) and "make study" in str(refused.value)
    assert server.process is None and server.port is None


@pytest.mark.parametrize("value", ["", "0"])
def test_offline_unset_or_zero_lets_a_server_start(monkeypatch, value):
    class Started(Exception):
        pass

    def reached(*args, **kwargs):
        raise Started

    monkeypatch.setattr(serve, "ensure_model", reached)
    monkeypatch.setenv("EXTAGENTS_OFFLINE", value)
    with pytest.raises(Started):
        LocalServer(TEST_MODEL, context_window=1024, progress=False).start()


@pytest.mark.local_model
def test_two_real_servers_of_one_model_and_window_log_apart():
    with LocalServer(TEST_MODEL, context_window=1024, progress=False) as first, \
            LocalServer(TEST_MODEL, context_window=1024, progress=False) as second:
        servers = {first.port: first, second.port: second}
        assert len(servers) == 2 and first.process is not None and second.process is not None
        assert all(s.server_files(port)[0].exists() for port, s in servers.items())
    for port, server in servers.items():
        config, log = server.server_files(port)
        assert not config.exists()  # gone with its server
        (other,) = set(servers) - {port}
        text = log.read_text(errors="replace")
        assert f":{port}" in text and f":{other}" not in text
        assert text.count("Started server process") == text.count("Shutting down") == 1  # its own start and stop
    assert len({s.server_files(port)[1] for port, s in servers.items()}) == 2
