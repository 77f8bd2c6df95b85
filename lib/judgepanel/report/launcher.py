"""Start and stop the simulated judge server as a child process.

The report and the tests both need a real server on a free loopback port; this is the one
place that knows how to start it, wait until it listens, and stop it even on failure. It
takes the server's options as one :class:`~judgepanel.report.simconfig.SimConfig` and
passes them as the server's own flags (:meth:`SimConfig.cli_args`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from judgepanel.report.simconfig import SimConfig


@dataclass
class SimProcess:
    """A running simulated judge server."""

    process: subprocess.Popen
    port: int
    log_path: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stop(self, timeout: float = 10.0) -> None:
        """Terminate the server; kill it if it does not exit in time."""
        if self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=timeout)

    def __enter__(self) -> SimProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_command_line(config: SimConfig, port: int, port_file: Path) -> list[str]:
    """The command that serves ``config`` on ``port`` (0: a free one), writing the bound
    port to ``port_file``: ``python -m judgepanel_sim serve`` and ``config``'s flags."""
    return [
        sys.executable,
        "-m",
        "judgepanel_sim",
        "serve",
        "--port",
        str(port),
        "--port-file",
        str(port_file),
        *config.cli_args(),
    ]


def start_sim_server(
    config: SimConfig | None = None,
    *,
    port: int = 0,
    startup_timeout: float = 60.0,
    log_dir: Path | None = None,
) -> SimProcess:
    """Start the simulated judge server on ``config`` (default: no faults, seed 0) on a free
    port (or on ``port``, to restart a server where its clients expect it); its log goes to
    a new folder in ``log_dir``. Returns once it accepts connections.
    """
    workdir = Path(tempfile.mkdtemp(prefix="judgepanel-sim-", dir=log_dir))
    port_file = workdir / "port"
    log_path = workdir / "server.log"
    cmd = serve_command_line(config or SimConfig(), port, port_file)
    log = log_path.open("wb")
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    log.close()
    deadline = time.monotonic() + startup_timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(
                f"the simulated judge server exited with code {proc.returncode} before "
                f"listening; its log:\n{log_path.read_text(errors='replace')[-4000:]}"
            )
        text = port_file.read_text().strip() if port_file.exists() else ""
        if text.isdigit():
            return SimProcess(proc, int(text), log_path)
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    raise RuntimeError(
        f"the simulated judge server did not listen within {startup_timeout} s; its log: {log_path}"
    )


def start_sim_servers(n: int, config: SimConfig | None = None) -> list[SimProcess]:
    """``n`` simulated judge servers on the same ``config`` (see :func:`start_sim_server`),
    started side by side; all stopped if one fails to start."""

    with ThreadPoolExecutor(max_workers=n) as starting:
        futures = [starting.submit(start_sim_server, config) for _ in range(n)]
    started = [f.result() for f in futures if f.exception() is None]
    failed = [f.exception() for f in futures if f.exception() is not None]
    if failed:
        for server in started:
            server.stop()
        raise failed[0]  # type: ignore[misc]
    return started
