"""`make lab` checked once in a real browser, outside CI: JupyterLab starts as `make lab` starts it, the lesson
opens in headless Chromium (Debian's package, installed by this script when missing and run as root), and the
lesson runs cell by cell on the kernel JupyterLab gives it, replaying the committed trace (no model call).

    .venv/bin/python benchmarks/lab_check.py [--out /tmp/lab_check]

Prints the kernel's interpreter (it must be the project's .venv/bin/python), each code cell's status, and the
path of the screenshot of JupyterLab with the lesson open after it ran.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import requests
import websocket

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from extlib.lab import NOTEBOOKS, lab_command  # noqa: E402

PORT = 8899
REPLAY = {"compute": False, "results_dir": "../results/cpu/00_lesson"}  # the committed trace: no model call


def chromium() -> str:
    """The Chromium binary, installed from Debian's packages when missing (as root)."""
    found = shutil.which("chromium")
    if found:
        return found
    if not shutil.which("apt-get") or os.geteuid() != 0:
        sys.exit("no chromium here: install Debian's package (apt-get install chromium) and run this again")
    subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", "chromium"], check=True)
    return shutil.which("chromium") or sys.exit("apt-get installed chromium, but no chromium binary is on PATH")


def wait_for(url: str, token: str, seconds: float = 90) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            if requests.get(url, params={"token": token}, timeout=2).ok:
                return
        except requests.ConnectionError:
            pass
        time.sleep(1)
    sys.exit(f"JupyterLab did not answer at {url} within {seconds:.0f} s")


def execute(ws: websocket.WebSocket, session: str, code: str) -> tuple[str, str, str]:
    """Run `code` on the kernel; returns its status (ok, error), any error's name and value, and what it printed."""
    msg_id = uuid.uuid4().hex
    ws.send(json.dumps({"header": {"msg_id": msg_id, "msg_type": "execute_request", "session": session,
                                   "username": "lab_check", "version": "5.3"},
                        "parent_header": {}, "metadata": {}, "channel": "shell",
                        "content": {"code": code, "silent": False, "store_history": True,
                                    "user_expressions": {}, "allow_stdin": False, "stop_on_error": True}}))
    printed = ""
    while True:
        reply = json.loads(ws.recv())
        if reply.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        if reply["msg_type"] == "stream" and reply["content"]["name"] == "stdout":
            printed += reply["content"]["text"]
        if reply["msg_type"] == "execute_reply":
            content = reply["content"]
            return content["status"], f"{content.get('ename', '')}: {content.get('evalue', '')}".strip(": "), printed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("/tmp/lab_check"), help="where the screenshot goes")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    browser, token = chromium(), secrets.token_hex(16)
    command = [*lab_command(NOTEBOOKS, PORT), "--no-browser", f"--IdentityProvider.token={token}"]
    log = (args.out / "lab.log").open("w")
    lab = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log)
    base = f"http://127.0.0.1:{PORT}"
    try:
        wait_for(f"{base}/api/status", token)
        auth = {"Authorization": f"token {token}"}
        spec = requests.get(f"{base}/api/kernelspecs", headers=auth, timeout=10).json()["kernelspecs"]["python3"]
        session = requests.post(f"{base}/api/sessions", headers=auth, timeout=60, json={
            "path": "00_lesson.ipynb", "type": "notebook", "name": "00_lesson.ipynb",
            "kernel": {"name": "python3"}}).json()
        ws = websocket.create_connection(f"ws://127.0.0.1:{PORT}/api/kernels/{session['kernel']['id']}/channels"
                                         f"?token={token}", timeout=600)
        _, _, interpreter = execute(ws, session["id"], "import sys\nprint(sys.executable)")
        print(f"kernelspec python3: {spec['spec']['argv'][0]}; the kernel runs {interpreter.strip()} "
              f"(the project's: {sys.executable})", end="")
        cells = json.loads((NOTEBOOKS / "00_lesson.ipynb").read_text())["cells"]
        failed = 0
        for k, cell in enumerate(c for c in cells if c["cell_type"] == "code"):
            code = "".join(cell["source"])
            if "parameters" in cell["metadata"].get("tags", []):
                code += "\n" + "\n".join(f"{key} = {value!r}" for key, value in REPLAY.items())
            status, error, _ = execute(ws, session["id"], code)
            failed += status != "ok"
            print(f"\ncode cell {k + 1}: {status}{' ' + error if error else ''}", end="")
        print()
        shot = args.out / "lab_lesson.png"
        subprocess.run([browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        "--window-size=1500,1100", "--virtual-time-budget=20000", f"--screenshot={shot}",
                        f"{base}/lab/tree/00_lesson.ipynb?token={token}"], check=True, capture_output=True,
                       timeout=180)
        print(f"screenshot: {shot}")
        return 1 if failed else 0
    finally:
        lab.terminate()
        lab.wait(timeout=30)
        log.close()


if __name__ == "__main__":
    sys.exit(main())
