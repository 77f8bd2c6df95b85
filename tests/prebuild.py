"""Build what the tests share before they start: `make test` runs this, then the tests.

The shared builds (``shared_build.py``) would otherwise be made by the first worker that
asks, while the other waits on the lock; built here first, the report and the determinism
baseline are made side by side and every worker finds them ready. Running it twice on the
same sources builds nothing.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from small_project import shared_report, shared_small_project
from test_table_determinism import determinism_baseline


def main() -> None:
    started = time.monotonic()
    project = shared_small_project()
    print(f"shared build: the small project ready after {time.monotonic() - started:.0f} s")
    with ThreadPoolExecutor(2) as pool:
        report = pool.submit(shared_report, project)
        baseline = pool.submit(determinism_baseline, project)
        report.result(), baseline.result()
    print(
        f"shared build: the report and the determinism baseline ready after "
        f"{time.monotonic() - started:.0f} s"
    )


if __name__ == "__main__":
    main()
