"""Start and stop the simulated judge server as a child process.

The report and the tests both need a real server on a free loopback port; this is the one
place that knows how to start it, wait until it listens, and stop it even on failure.
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
from typing import Any


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


def start_sim_server(
    *,
    latency_ms: float = 0.0,
    error_rate: float = 0.0,
    malformed_rate: float = 0.0,
    timeout_rate: float = 0.0,
    seed: int = 0,
    startup_timeout: float = 60.0,
    log_dir: Path | None = None,
    echo_key: bool = False,
    ledger: Path | None = None,
    port: int = 0,
    rpm: int = 0,
    tpm: int = 0,
    burst_seconds: float = 2.0,
    count_refused: bool = True,
    cache_window: int = 0,
    report_cost: bool = False,
    prices: Path | None = None,
    batch_delay: float = 0.0,
    batch_fail_share: float = 0.0,
    batch_expire_after: int = 0,
    batch_invalid: bool = False,
    batch_workers: int = 0,
) -> SimProcess:
    """Start the simulated judge server (``python -m judgepanel_sim serve``) on a free port
    (or on ``port``, to restart a server where its clients expect it).

    ``echo_key`` and ``ledger`` are the server's test switches: an endpoint that echoes the
    key, and a file counting every billed answer. ``rpm``, ``tpm``, ``burst_seconds``,
    ``count_refused``, ``cache_window``, ``report_cost`` and ``prices`` make it behave like
    a provider (rate limits, prompt caching, cost in usage), and the ``batch_*`` options
    its batch API (a delay, failed lines, expiry, rejected files; ``batch_workers``: processes
    answering batch lines); each is off by default
    and forwarded only when set. Returns once it accepts connections.
    """
    workdir = Path(tempfile.mkdtemp(prefix="judgepanel-sim-", dir=log_dir))
    port_file = workdir / "port"
    log_path = workdir / "server.log"
    cmd = [
        sys.executable,
        "-m",
        "judgepanel_sim",
        "serve",
        "--port",
        str(port),
        "--port-file",
        str(port_file),
        "--latency-ms",
        str(latency_ms),
        "--error-rate",
        str(error_rate),
        "--malformed-rate",
        str(malformed_rate),
        "--timeout-rate",
        str(timeout_rate),
        "--seed",
        str(seed),
        *(["--echo-key"] if echo_key else []),
        *(["--ledger", str(ledger)] if ledger is not None else []),
        *(["--rpm", str(rpm)] if rpm else []),
        *(["--tpm", str(tpm)] if tpm else []),
        *(["--burst-seconds", str(burst_seconds)] if burst_seconds != 2.0 else []),
        *([] if count_refused else ["--no-count-refused"]),
        *(["--cache-window", str(cache_window)] if cache_window else []),
        *(["--report-cost"] if report_cost else []),
        *(["--prices", str(prices)] if prices is not None else []),
        *(["--batch-delay", str(batch_delay)] if batch_delay else []),
        *(["--batch-fail-share", str(batch_fail_share)] if batch_fail_share else []),
        *(["--batch-expire-after", str(batch_expire_after)] if batch_expire_after else []),
        *(["--batch-invalid"] if batch_invalid else []),
        *(["--batch-workers", str(batch_workers)] if batch_workers else []),
    ]
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


def start_sim_servers(n: int, **options: Any) -> list[SimProcess]:
    """``n`` simulated judge servers with the same ``options`` (see
    :func:`start_sim_server`), started side by side; all stopped if one fails to start."""

    with ThreadPoolExecutor(max_workers=n) as starting:
        futures = [starting.submit(start_sim_server, **options) for _ in range(n)]
    started = [f.result() for f in futures if f.exception() is None]
    failed = [f.exception() for f in futures if f.exception() is not None]
    if failed:
        for server in started:
            server.stop()
        raise failed[0]  # type: ignore[misc]
    return started
