import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from jupyter_client import BlockingKernelClient

from extlib import lab
from extlib.lab import NOTEBOOKS, lab_command

START_TIMEOUT_S = 60  # JupyterLab answers in a few seconds; the bound only turns a hang into a clear failure


@pytest.fixture
def linux(monkeypatch):
    monkeypatch.setattr(sys, "platform", "linux")
    for name in ("DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_root_without_display_allows_root_and_opens_no_browser(linux):
    linux.setattr(os, "geteuid", lambda: 0)
    command = lab_command(Path("/nb"))
    assert command[:2] == [str(Path(sys.executable).parent / "jupyter"), "lab"]
    assert {"--notebook-dir=/nb", "--ip=127.0.0.1", "--allow-root", "--no-browser"} <= set(command)
    assert not any(arg.startswith("--port") for arg in command)


@pytest.mark.parametrize("display", [("DISPLAY", ":0"), ("WAYLAND_DISPLAY", "wayland-0")])
def test_user_with_display_opens_the_browser_and_needs_no_root(linux, display):
    linux.setattr(os, "geteuid", lambda: 1000)
    linux.setenv(*display)
    command = lab_command(Path("/nb"), port=9999)
    assert "--port=9999" in command
    assert "--allow-root" not in command and "--no-browser" not in command


def test_macos_has_a_display(linux):
    linux.setattr(sys, "platform", "darwin")
    assert lab.has_display()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_lab_serves_the_notebooks_on_the_venv_kernel(tmp_path):
    """The real server from `lab_command`, with Jupyter's config, data and runtime dirs in tmp_path."""
    port, token = _free_port(), secrets.token_hex(16)
    runtime = tmp_path / "runtime"
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "config"), "JUPYTER_DATA_DIR": str(tmp_path / "data"),
           "JUPYTER_RUNTIME_DIR": str(runtime)}
    # this JupyterLab takes the token as IdentityProvider.token (ServerApp.token is deprecated)
    command = lab_command(NOTEBOOKS, port=port) + [f"--IdentityProvider.token={token}", "--port-retries=0",
                                                   "--no-browser"]
    base = f"http://127.0.0.1:{port}"

    def api(path: str, method: str = "GET", body: dict | None = None) -> dict:
        request = urllib.request.Request(f"{base}{path}?token={token}", method=method,
                                         data=json.dumps(body).encode() if body is not None else None)
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.status in (200, 201)
            return json.load(response)

    log = tmp_path / "lab.log"
    with log.open("w") as out:
        server = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                status = api("/api/status")
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not answer on {base} within {START_TIMEOUT_S} s "
                                f"(exit code {server.poll()}):\n{log.read_text()[-3000:]}")
                time.sleep(0.5)
        assert {"started", "last_activity", "kernels"} <= set(status)
        assert f"{base}/lab?token=" in log.read_text()  # the URL it prints to open

        names = {item["name"] for item in api("/api/contents/")["content"]}
        assert {"00_lesson.ipynb", "01_scaling.ipynb"} <= names

        assert "python3" in api("/api/kernelspecs")["kernelspecs"]
        kernel = api("/api/kernels", method="POST", body={"name": "python3"})
        client = BlockingKernelClient(connection_file=str(runtime / f"kernel-{kernel['id']}.json"))
        client.load_connection_file()
        client.start_channels()
        try:
            reply = client.execute("import sys, extlib", user_expressions={"prefix": "sys.prefix"}, reply=True,
                                   timeout=START_TIMEOUT_S)
        finally:
            client.stop_channels()
        assert reply["content"]["status"] == "ok"
        assert reply["content"]["user_expressions"]["prefix"]["data"]["text/plain"] == repr(sys.prefix)  # the venv
    finally:
        server.terminate()  # JupyterLab stops its kernels on SIGTERM
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
