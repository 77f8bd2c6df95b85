"""Warm notebook kernels: a kernel's start paid once per lane, not once per notebook.

A kernel spends about three CPU-seconds importing the Jupyter stack, pandas, matplotlib,
seaborn, SciPy and scikit-learn before a notebook's first cell; a report runs some thirty
notebooks. The report therefore leases each notebook a kernel from :data:`KERNELS`: one
left idle by an earlier notebook when there is one started alike (same pool width, working
folder and environment), else a new one, warmed with those imports. When the notebook has
run, the kernel is put back to the state it had right after its start
(`judgepanel.report.fresh_state`: names, counter, settings, random states, working folder,
the project's modules) and kept for the next; a kernel whose notebook failed, or that
cannot be put back, is shut down instead. At most :data:`KEEP` idle kernels are kept (one
per core: a report runs one notebook per core at most), and all are shut down when the
process exits.
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from judgepanel.errors import JudgepanelError
from judgepanel.report.kernels import kernel_manager, thread_environment

if TYPE_CHECKING:
    from jupyter_client import AsyncKernelManager

KERNEL_ARGUMENTS = ["--log-level=CRITICAL", "--HistoryManager.hist_file=:memory:"]
"""How every report kernel starts: quiet about its local transport, and with its history
in memory (as papermill's own kernels)."""

WARM_UP = (
    "from judgepanel.report import fresh_state\n"
    "fresh_state.warm_up()\n"
    "get_ipython().judgepanel_fresh_state = fresh_state.snapshot()\n"
    "get_ipython().judgepanel_fresh_state.restore(get_ipython())\n"
)
"""What a new kernel runs before its first notebook, unseen by it (run silently: no output,
no history, no execution count)."""

RESTORE = "get_ipython().judgepanel_fresh_state.restore(get_ipython())\n"
"""What a kernel runs between two notebooks."""

KEEP = max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 2)
"""How many idle kernels a process keeps."""

SETUP_SECONDS = 120
"""How long a warm-up or a restore may take before the kernel is given up."""


class KernelSetupError(JudgepanelError):
    """A warm kernel could not be started, warmed or put back."""


@dataclass(eq=False)
class WarmKernel:
    """One kernel, started alike for every notebook it runs."""

    key: tuple[object, ...]
    manager: AsyncKernelManager
    notebooks: int = 0

    @classmethod
    def start(cls, threads: int | None, cwd: str, key: tuple[object, ...]) -> WarmKernel:
        """Start a kernel whose pools are ``threads`` wide in ``cwd``, and warm it."""
        from jupyter_core.utils import run_sync

        manager = kernel_manager(threads)(kernel_name="python3")
        run_sync(manager.start_kernel)(extra_arguments=list(KERNEL_ARGUMENTS), cwd=cwd)
        kernel = cls(key, manager)
        try:
            kernel.run_silently(WARM_UP)
        except BaseException:
            kernel.stop()
            raise
        return kernel

    def run_silently(self, code: str) -> None:
        """Run ``code`` in the kernel without output, history or execution count.

        Raises:
            KernelSetupError: the code raised, or the kernel did not answer in time.
        """
        from jupyter_client import BlockingKernelClient

        client = BlockingKernelClient(**self.manager.get_connection_info(session=True))
        client.start_channels()
        try:
            client.wait_for_ready(timeout=SETUP_SECONDS)
            reply = client.execute_interactive(
                code,
                silent=True,
                store_history=False,
                allow_stdin=False,
                timeout=SETUP_SECONDS,
                output_hook=lambda msg: None,
            )
        except (RuntimeError, TimeoutError) as exc:
            raise KernelSetupError(f"a warm kernel did not answer: {exc}") from exc
        finally:
            client.stop_channels()
        content = reply["content"]
        if content.get("status") != "ok":
            raise KernelSetupError(
                f"a warm kernel's setup raised {content.get('ename')}: {content.get('evalue')}"
            )

    def alive(self) -> bool:
        from jupyter_core.utils import run_sync

        return bool(run_sync(self.manager.is_alive)())

    def refresh(self) -> str | None:
        """Put the kernel back to its fresh state; why not, when it could not be."""
        if not self.alive():
            return "the kernel is gone"
        try:
            self.run_silently(RESTORE)
        except KernelSetupError as exc:
            return str(exc)
        return None

    def stop(self) -> None:
        """Shut the kernel down at once (it runs nothing anyone waits for)."""
        from jupyter_core.utils import run_sync

        try:
            if self.manager.has_kernel:
                run_sync(self.manager.shutdown_kernel)(now=True)
        except RuntimeError:  # already gone
            pass


@dataclass(eq=False)
class Lease:
    """A kernel lent to one notebook (``None``: papermill starts one for it alone).
    :meth:`spoil` when the notebook failed: the kernel is then shut down rather than kept."""

    kernel: WarmKernel | None
    threads: int | None = None
    spoiled: bool = False

    @property
    def arguments(self) -> dict[str, object]:
        """papermill's keyword arguments for this kernel."""
        if self.kernel is not None:
            return {"km": self.kernel.manager}
        return {
            "kernel_manager_class": kernel_manager(self.threads),
            # The kernel is local: its notices (TCP without encryption, the interrupt at
            # shutdown) are noise here; a failing cell still surfaces through papermill.
            "extra_arguments": KERNEL_ARGUMENTS[:1],
        }

    @property
    def pid(self) -> int | None:
        """The warm kernel's process (``None`` for papermill's own)."""
        if self.kernel is None:
            return None
        return getattr(self.kernel.manager.provisioner, "pid", None)

    def spoil(self) -> None:
        self.spoiled = True


@dataclass(eq=False)
class KernelPool:
    """Idle warm kernels of this process, by how they were started."""

    keep: int = KEEP
    _idle: list[WarmKernel] = field(default_factory=list)
    _live: set[WarmKernel] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    started: int = 0
    reused: int = 0
    last_failure: str = ""
    """Why the last kernel could not be started or put back (for a test's message)."""

    def acquire(self, threads: int | None, cwd: str) -> Lease | None:
        """A kernel for one notebook: an idle one started alike, else a new one; ``None``
        when a new one cannot be started and warmed (papermill then starts its own, whose
        failure the notebook reports)."""
        key = kernel_key(threads, cwd)
        kernel = self._take(key)
        if kernel is None:
            try:
                kernel = WarmKernel.start(threads, cwd, key)
            except (KernelSetupError, RuntimeError, OSError) as exc:
                self.last_failure = f"start: {type(exc).__name__}: {exc}"
                return None
            with self._lock:
                self._live.add(kernel)
                self.started += 1
        return Lease(kernel, threads)

    def release(self, lease: Lease) -> None:
        """Take back a lent kernel: put back to its fresh state and kept, or shut down when
        its notebook failed or it cannot be put back."""
        kernel = lease.kernel
        if kernel is None:
            return
        kernel.notebooks += 1
        kernel.manager.close_clients()  # type: ignore[attr-defined]
        if lease.spoiled:
            self._drop(kernel)
            return
        failure = kernel.refresh()
        if failure is None:
            self._give(kernel)
        else:
            self.last_failure = f"put back: {failure}"
            self._drop(kernel)

    def shutdown(self) -> None:
        """Shut down every kernel of this pool, idle or lent."""
        with self._lock:
            kernels, self._idle = list(self._live), []
            self._live.clear()
        for kernel in kernels:
            kernel.stop()

    def _take(self, key: tuple[object, ...]) -> WarmKernel | None:
        with self._lock:
            for kernel in self._idle:
                if kernel.key == key:
                    self._idle.remove(kernel)
                    self.reused += 1
                    return kernel
        return None

    def _give(self, kernel: WarmKernel) -> None:
        with self._lock:
            self._idle.append(kernel)
            surplus = self._idle[: max(0, len(self._idle) - self.keep)]
            del self._idle[: len(surplus)]
            for old in surplus:
                self._live.discard(old)
        for old in surplus:
            old.stop()

    def _drop(self, kernel: WarmKernel) -> None:
        with self._lock:
            self._live.discard(kernel)
        kernel.stop()


@contextmanager
def notebook_kernel(threads: int | None, cwd: str, *, warm: bool = True) -> Iterator[Lease]:
    """The kernel one notebook runs in: a warm one of :data:`KERNELS`, or (``warm=False``, or
    no warm kernel could be had) one papermill starts for it alone, with pools ``threads``
    wide."""
    lease = (KERNELS.acquire(threads, cwd) if warm else None) or Lease(None, threads)
    try:
        yield lease
    except BaseException:
        lease.spoil()
        raise
    finally:
        KERNELS.release(lease)


MOMENTARY = frozenset({"PYTEST_CURRENT_TEST"})
"""Environment variables that name the moment, not the setup (a test runner's current
test): left out of :func:`kernel_key`, so that they do not keep a kernel from being reused."""


def kernel_key(threads: int | None, cwd: str) -> tuple[object, ...]:
    """How a kernel is started: two notebooks share a kernel only when this is equal."""
    env = thread_environment(threads) if threads is not None else dict(os.environ)
    setup = sorted((k, v) for k, v in env.items() if k not in MOMENTARY)
    return (threads, os.path.realpath(cwd), tuple(setup))


KERNELS = KernelPool()
"""This process's warm kernels."""

atexit.register(KERNELS.shutdown)
