"""Score a run through the batch API and die at one step, as a crash would (a test driver).

The kill tests of ``test_batch.py`` run this in a subprocess: it scores like
``judgepanel score --run RUN --runs-file FILE --batch --batch-poll 0.05 --no-progress``,
but through the library, with a fault hook (``BatchOptions.fault``) that kills the process
(SIGKILL) at ``STEP``: ``uploaded``, ``created``, ``polling`` or ``ingesting``. Production
code reads no switch for this. Exit 3 means the step was never reached.

    python tests/batch_crash_driver.py RUNS_FILE RUN STEP
"""

from __future__ import annotations

import os
import signal
import sys
from dataclasses import replace
from pathlib import Path

import judgepanel.studies  # noqa: F401  (registers each study's planner)
from judgepanel.core.batch import BatchOptions, FaultHook, run_batches
from judgepanel.core.scoring import plan_target
from judgepanel.core.settings import ScoreRequest, resolve_settings
from judgepanel.core.store import Store

STEPS = ("uploaded", "created", "polling", "ingesting")


def kill_at(step: str) -> FaultHook:
    """The fault hook that kills this process at ``step``."""

    def fault(at: str) -> None:
        if at == step:
            os.kill(os.getpid(), signal.SIGKILL)

    return fault


def main(argv: list[str]) -> int:
    runs_file, run, step = argv
    if step not in STEPS:
        print(f"unknown step {step!r}; one of {', '.join(STEPS)}", file=sys.stderr)
        return 2
    options = {"batch": True, "batch_poll": 0.05, "progress": False}
    settings = resolve_settings(ScoreRequest(run=run, runs_file=Path(runs_file), options=options))
    send = settings.send
    batch = replace(BatchOptions.of(send), fault=kill_at(step))
    with Store(settings.store) as store:
        for target in settings.targets:
            specs = plan_target(target, settings)
            run_batches(specs, store, prices=settings.prices, options=send,
                        run=settings.run or target.name, desc=target.name, batch=batch)  # fmt: skip
    print(f"the run ended without reaching {step!r}", file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
