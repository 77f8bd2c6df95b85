"""The notebook kernels' share of the cores: one OpenMP and BLAS pool width per kernel.

A report runs up to ``--jobs`` kernels at once. Each would otherwise size its OpenMP and
BLAS pools to the whole machine, so two kernels on two cores run four spinning threads that
wait on each other (scikit-learn's histogram gradient boosting, which the combiner uses,
slows down many times over). Each kernel therefore starts with the pools' width set to its
share of the cores, ``cores // jobs`` (at least one). A width the user set in the
environment is kept. The tables do not depend on the width (the determinism tests run
both).

On POSIX the kernels talk to the report over Unix sockets in a folder of their own, not
over TCP ports. A TCP port is chosen by the report and bound by the kernel a second or two
later, once it has started; in between, another process (a second kernel, a simulated
server) may take it, and the kernel then dies at start and its notebook fails. A socket
file in a folder made for one kernel cannot be taken so.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jupyter_client import AsyncKernelManager

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def kernel_threads(cores: int, jobs: int) -> int:
    """The pool width of one kernel among ``jobs`` running at once on ``cores``."""
    return max(1, cores // max(1, jobs))


def thread_environment(threads: int, environ: dict[str, str] | None = None) -> dict[str, str]:
    """``environ`` (default: this process's) with each pool width not set there set to
    ``threads``."""
    env = dict(os.environ if environ is None else environ)
    for name in THREAD_VARIABLES:
        env.setdefault(name, str(threads))
    return env


@cache
def kernel_manager(threads: int | None) -> type[AsyncKernelManager]:
    """A kernel manager class whose kernels start with pools ``threads`` wide (``None``: the
    libraries' default), reached over Unix sockets on POSIX (nbclient takes a class, so the
    width is a class attribute; one class per width)."""
    from jupyter_client import AsyncKernelManager  # the Jupyter stack: loaded when a kernel starts

    class ThreadBudgetKernelManager(AsyncKernelManager):
        def __init__(self, **kw: Any) -> None:
            if os.name == "posix":
                kw.setdefault("transport", "ipc")
            super().__init__(**kw)
            self._socket_dir: str | None = None
            self.lent_clients: list[Any] = []

        def client(self, **kw: Any) -> Any:
            """A client of this kernel, remembered so that :meth:`close_clients` can close
            it: one that runs a notebook in a warm kernel is not closed by nbclient."""
            client = super().client(**kw)
            self.lent_clients.append(client)
            return client

        def close_clients(self) -> None:
            """Close the channels of every client handed out so far."""
            while self.lent_clients:
                self.lent_clients.pop().stop_channels()

        async def start_kernel(self, **kw: Any) -> None:  # type: ignore[override]
            if threads is not None:
                kw["env"] = thread_environment(threads, kw.pop("env", None))
            if self.transport == "ipc" and self._socket_dir is None:
                # short and new: a socket path has at most about 100 characters
                self._socket_dir = tempfile.mkdtemp(prefix="judgepanel-kernel-")
                self.ip = os.path.join(self._socket_dir, "k")
            await super().start_kernel(**kw)

        async def _async_cleanup_resources(self, restart: bool = False) -> None:
            await super()._async_cleanup_resources(restart=restart)
            if not restart and self._socket_dir is not None:
                shutil.rmtree(self._socket_dir, ignore_errors=True)
                self._socket_dir = None

        cleanup_resources = _async_cleanup_resources  # type: ignore[assignment]

    ThreadBudgetKernelManager.__name__ = f"ThreadBudgetKernelManager{threads}"
    return ThreadBudgetKernelManager
