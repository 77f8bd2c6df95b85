"""Where a report's time went, in ``outputs/_timings.json``: each step's start, end and seconds.

A step is the simulator's start, one run's scoring (with the calls it sent), one dataset's
call explorer, one notebook, or the index. A scoring step records ``cpu_s``, the CPU time
of its client and of the simulated server it sent to (when the report started one), and a
notebook in a warm kernel the CPU time of its kernel: ``bench/bench_report.py`` prints the
CPU per call of each scoring run from it. Times are seconds since the command started,
so overlapping steps (notebooks beside scoring, notebooks beside each other) show as
overlapping intervals. ``bench/bench_report.py`` reads this file instead of the printed
lines; it is rewritten by every ``judgepanel report``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psutil

from judgepanel.report.jsonfile import write_json

TIMINGS_FILE = "_timings.json"


def process_cpu(pid: int | None) -> float | None:
    """CPU seconds (user and system) that process ``pid`` has used so far; ``None`` when
    there is no such process or it cannot be read. A step's ``cpu_s`` is the difference of
    two readings."""
    if pid is None:
        return None
    try:
        times = psutil.Process(pid).cpu_times()
    except (psutil.Error, OSError):
        return None
    return float(times.user + times.system)


def cpu_since(pid: int | None, before: float | None) -> float | None:
    """CPU seconds process ``pid`` used since it had used ``before`` (None: unknown)."""
    after = process_cpu(pid)
    return None if before is None or after is None else round(after - before, 3)


def scoring_cpu(client_s: float | None, server_s: float | None) -> dict[str, float]:
    """A scoring step's CPU fields: its client's, its server's (when the report started
    it) and, when both are known, their sum as ``cpu_s``."""
    out = {
        k: v for k, v in (("client_cpu_s", client_s), ("server_cpu_s", server_s)) if v is not None
    }
    if client_s is not None and server_s is not None:
        out["cpu_s"] = round(client_s + server_s, 3)
    return out


class Timings:
    """The steps of one report command, recorded from any thread."""

    def __init__(self) -> None:
        self._origin = time.monotonic()
        self._started_at = datetime.now(UTC).isoformat(timespec="seconds")
        self._steps: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def now(self) -> float:
        """Seconds since the command started."""
        return time.monotonic() - self._origin

    @contextmanager
    def step(self, phase: str, **fields: Any) -> Iterator[dict[str, Any]]:
        """Time the ``with`` block as one step; fields set on the yielded record are kept."""
        record: dict[str, Any] = {"phase": phase, **fields}
        start = self.now()
        try:
            yield record
        finally:
            end = self.now()
            record.update(start=round(start, 3), end=round(end, 3), seconds=round(end - start, 3))
            with self._lock:
                self._steps.append(record)

    def record(self, phase: str, start: float, **fields: Any) -> dict[str, Any]:
        """Record a step that began at ``start`` (seconds since the command) and ends now."""
        end = self.now()
        record: dict[str, Any] = {"phase": phase, **fields}
        record.update(start=round(start, 3), end=round(end, 3), seconds=round(end - start, 3))
        with self._lock:
            self._steps.append(record)
        return record

    def steps(self) -> list[dict[str, Any]]:
        """The steps recorded so far, by start time."""
        with self._lock:
            return sorted(self._steps, key=lambda s: s["start"])

    def write(self, outputs: Path, **fields: Any) -> Path:
        """Write ``outputs/_timings.json``: the command's fields, total seconds and steps."""
        path = Path(outputs) / TIMINGS_FILE
        write_json(
            path,
            {
                "started_at": self._started_at,
                "seconds": round(self.now(), 3),
                **fields,
                "steps": self.steps(),
            },
        )
        return path


def earlier_seconds(outputs: Path) -> dict[tuple[str, ...], float]:
    """Seconds each step took in the last report written to ``outputs`` (none if absent).

    Keys are ``("explorer", profile, dataset)`` and ``("notebook", run, notebook)``; the
    report starts the longest chains of steps first.
    """
    path = Path(outputs) / TIMINGS_FILE
    try:
        steps = json.loads(path.read_text(encoding="utf-8")).get("steps", [])
    except (OSError, ValueError):
        return {}
    took: dict[tuple[str, ...], float] = {}
    names = {"explorer": ("profile", "dataset"), "notebook": ("run", "notebook")}
    for step in steps:
        fields = names.get(step.get("phase"), ())
        key = (step.get("phase"), *(step.get(f) for f in fields))
        if fields and all(isinstance(k, str) for k in key):
            took[key] = float(step.get("seconds", 0.0))
    return took
