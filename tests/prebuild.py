"""Build what the tests share before they start: `make test` runs this, then the tests.

The shared builds (``shared_build.py``) would otherwise be made by the first worker that
asks, while the other waits on the lock; built here first, every worker finds them ready.
Running it twice on the same sources builds nothing.
"""

from __future__ import annotations

import time

from small_project import shared_report, shared_small_project


def main() -> None:
    started = time.monotonic()
    project = shared_small_project()
    print(f"shared build: the small project ready after {time.monotonic() - started:.0f} s")
    shared_report(project)
    print(f"shared build: its report ready after {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
