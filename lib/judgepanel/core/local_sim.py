"""The simulated judge server seen from the library: its options and its process.

:class:`SimConfig` declares each option once, with its default and help text; the
server's command-line flags are made from the fields (:meth:`SimConfig.add_flags`, read
back by :meth:`SimConfig.from_args`), the launcher turns a config into the same flags
(:meth:`SimConfig.cli_args`), and the server (``judgepanel_sim.judges.server``) runs on
it. :func:`start_sim_server` starts a server as a child process on a free loopback port,
waits until it listens and stops it even on failure; the report, the fusion study's
savings sample and the tests all start it here. The library never imports the synthetic
world: it runs ``python -m judgepanel_sim serve``, and the world imports this module.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

MAX_BODY_BYTES = 32 * 1024 * 1024
"""The largest request body the server reads (413 beyond)."""

PROVIDER = "provider behaviour (all off by default)"
BATCH = "the batch API (/v1/files, /v1/batches)"


def _about(help: str, *, flag: str = "", group: str = "") -> dict[str, str]:
    """A field's metadata: its help text, its flag (default: from its name) and the
    argument group it is listed in."""
    return {"help": help, "flag": flag, "group": group}


@dataclass(frozen=True)
class SimConfig:
    """Behaviour of one simulated judge server (every option off by default).

    A path option (``ledger``, ``prices``) defaults to ``None``; the others' flags take
    the type of their default. See each field's help text (``sim-server --help``).
    """

    seed: int = field(
        default=0, metadata=_about("fixes every sampled answer and every injected fault")
    )
    latency_ms: float = field(
        default=0.0, metadata=_about("added latency per request (asynchronous sleep)")
    )
    error_rate: float = field(default=0.0, metadata=_about("share of 429/500 answers (half each)"))
    malformed_rate: float = field(
        default=0.0, metadata=_about("share of bad answers (the handler's malformed one)")
    )
    timeout_rate: float = field(default=0.0, metadata=_about("share of stalled requests"))
    stall_seconds: float = field(
        default=600.0, metadata=_about("how long a stalled request sleeps")
    )
    retry_after_s: float = field(
        default=1.0, metadata=_about("the Retry-After sent with an injected 429")
    )
    max_body_bytes: int = field(
        default=MAX_BODY_BYTES, metadata=_about("larger request bodies get 413")
    )
    echo_key: bool = field(
        default=False,
        metadata=_about(
            "misbehave: copy the request's bearer token into every answer (tests scrubbing)"
        ),
    )
    ledger: Path | None = field(
        default=None, metadata=_about("append one JSON line per billed answer (usage) to this file")
    )
    rpm: int = field(
        default=0, metadata=_about("requests per minute per key (0: none)", group=PROVIDER)
    )
    tpm: int = field(
        default=0,
        metadata=_about(
            "tokens per minute per key (0: none); a request is charged its prompt tokens plus "
            "max_tokens (or 256) per choice",
            group=PROVIDER,
        ),
    )
    burst_s: float = field(
        default=2.0,
        metadata=_about(
            "seconds' worth of each limit a key may send at once (the bucket size)",
            flag="--burst-seconds",
            group=PROVIDER,
        ),
    )
    count_refused: bool = field(
        default=True,
        metadata=_about(
            "refused requests do not count toward the request limit",
            flag="--no-count-refused",
            group=PROVIDER,
        ),
    )
    cache_window: int = field(
        default=0,
        metadata=_about(
            "report cached prompt prefixes seen in the last N answered requests (0: off)",
            group=PROVIDER,
        ),
    )
    report_cost: bool = field(
        default=False, metadata=_about("add usage.cost (USD), as OpenRouter does", group=PROVIDER)
    )
    prices: Path | None = field(
        default=None,
        metadata=_about("JSON or YAML price table replacing the simulator's own", group=PROVIDER),
    )
    batch_delay_s: float = field(
        default=0.0,
        metadata=_about("seconds before a batch is processed", flag="--batch-delay", group=BATCH),
    )
    batch_fail_share: float = field(
        default=0.0, metadata=_about("share of batch lines answered 500", group=BATCH)
    )
    batch_expire_after: int = field(
        default=0,
        metadata=_about("a batch expires after answering this many lines (0: never)", group=BATCH),
    )
    batch_invalid: bool = field(
        default=False, metadata=_about("every batch fails validation", group=BATCH)
    )
    batch_workers: int = field(
        default=0,
        metadata=_about(
            "processes that answer batch lines (0: the server's own); same answers either way",
            group=BATCH,
        ),
    )

    def __post_init__(self) -> None:
        for name in ("error_rate", "malformed_rate", "timeout_rate"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must lie in [0, 1], got {value}")
        if self.error_rate + self.timeout_rate > 1.0:
            raise ValueError("error_rate + timeout_rate must not exceed 1")
        if self.latency_ms < 0:
            raise ValueError(f"latency_ms must be >= 0, got {self.latency_ms}")
        for name in ("rpm", "tpm", "cache_window", "batch_workers"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if not self.burst_s > 0:
            raise ValueError(f"burst_s must be > 0, got {self.burst_s}")
        if not 0.0 <= self.batch_fail_share <= 1.0:
            raise ValueError(f"batch fail share must lie in [0, 1], got {self.batch_fail_share}")
        if self.batch_delay_s < 0 or self.batch_expire_after < 0:
            raise ValueError("batch delay and expiry must be >= 0")

    @staticmethod
    def flag(name: str) -> str:
        """The command-line flag of the field ``name``."""
        meta = {f.name: f for f in fields(SimConfig)}[name].metadata
        return meta["flag"] or "--" + name.replace("_", "-")

    @classmethod
    def add_flags(cls, parser: argparse.ArgumentParser) -> None:
        """Add one flag per field to ``parser`` (in argument groups as the fields say)."""
        groups: dict[str, Any] = {"": parser}
        for f in fields(cls):
            group = f.metadata["group"]
            if group not in groups:
                groups[group] = parser.add_argument_group(group)
            where, flag, help = groups[group], cls.flag(f.name), f.metadata["help"]
            if isinstance(f.default, bool):
                action = "store_false" if f.default else "store_true"
                where.add_argument(flag, dest=f.name, action=action, help=help)
            elif f.default is None:
                where.add_argument(flag, dest=f.name, type=Path, help=help)
            else:
                kind = type(f.default)
                where.add_argument(flag, dest=f.name, type=kind, default=f.default, help=help)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> SimConfig:
        """The config the flags of :meth:`add_flags` were given (raises ``ValueError``)."""
        return cls(**{f.name: getattr(args, f.name) for f in fields(cls)})

    def cli_args(self) -> list[str]:
        """The flags that give a server this config (each option not at its default)."""
        out: list[str] = []
        for f in fields(self):
            value = getattr(self, f.name)
            if value == f.default:
                continue
            out.append(self.flag(f.name))
            if not isinstance(f.default, bool):
                out.append(str(value))
        return out


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
