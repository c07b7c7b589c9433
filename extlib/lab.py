"""`make lab`: JupyterLab on the project's notebooks, from the venv's own jupyter.

The notebooks ask for the kernel "python3"; inside the venv that is the venv's kernelspec, whose `python` JupyterLab
replaces by its own interpreter, the venv's python, so the notebooks import extlib and its packages. JupyterLab
refuses to start as root (as in a container) without --allow-root, and on a machine without a display it would try
to open a browser it cannot show (or a text browser in this terminal): there it runs with --no-browser, and the URL
it prints, with its login token, is the one to open.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def has_display() -> bool:
    """Whether a browser can open here: on Linux only under X11 or Wayland; macOS always has one."""
    if sys.platform != "linux":
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def lab_command(notebooks: Path, port: int | None = None) -> list[str]:
    """The `jupyter lab` command line for this machine, serving `notebooks` on 127.0.0.1 (`port`: JupyterLab's
    8888, or the next free one, when None). Loopback only: the token is the only lock, and an SSH tunnel reaches
    it from elsewhere. One Ctrl-C stops it (answer_yes), where JupyterLab would ask y/n for 5 seconds and then run
    on, with `make lab` waiting for it."""
    command = [str(Path(sys.executable).parent / "jupyter"), "lab", f"--notebook-dir={notebooks}", "--ip=127.0.0.1",
               "--ServerApp.answer_yes=True"]
    if port is not None:
        command.append(f"--port={port}")
    if os.geteuid() == 0:
        command.append("--allow-root")
    if not has_display():
        command.append("--no-browser")
    return command


def main() -> None:
    """Say what starts and where its URL will be, then become JupyterLab (exec): Ctrl-C then reaches JupyterLab
    alone, which stops its kernels and exits."""
    command = lab_command(NOTEBOOKS)
    print(f"Starting JupyterLab on {NOTEBOOKS}, notebook kernel {sys.executable}: {shlex.join(command)}")
    if not has_display():
        print("No display here: JupyterLab prints the URL to open, http://127.0.0.1:8888/lab?token=<its token>, "
              "below 'Or copy and paste one of these URLs:'. Open it in a browser on this machine, or on yours "
              "through an SSH tunnel: ssh -L 8888:127.0.0.1:8888 <this host> (with the URL's port if not 8888).")
    sys.stdout.flush()  # exec discards what Python has not written yet
    os.execv(command[0], command)


if __name__ == "__main__":
    main()
