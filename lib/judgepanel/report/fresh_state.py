"""A notebook kernel's state as it was when the kernel had just started, and putting it back.

A report reuses a warm kernel for the notebooks of a lane (`judgepanel.report.warm_kernels`),
so that the Jupyter stack, pandas, matplotlib, seaborn, SciPy and scikit-learn are imported
once per lane, not once per notebook. This module runs inside the kernel. Right after the
kernel has started and imported those libraries, :func:`snapshot` records what a notebook
can change without meaning to leave it behind; between two notebooks :meth:`FreshState.restore`
puts it back, so that the second notebook sees what a fresh kernel would show it:

- the user's names, the execution counter and the output history (IPython's new session);
- the working folder, the environment variables, ``sys.path`` and the warning filters;
- matplotlib's settings (seaborn's themes live there too) and its open figures;
- numpy's error handling and print options, pandas' options, scikit-learn's configuration;
- the global random states of numpy and ``random``, reseeded from the system's entropy as
  at an interpreter's start;
- the logging configuration;
- every module of the project: it is imported anew by the next notebook, so that no memo,
  cache or registry of one notebook reaches another.

Third-party modules stay imported: that is what a warm kernel is for. What a notebook does
to them beyond the settings above (a monkey-patched function, a registered plugin) would
outlive it; the project's notebooks do none of that, and a test runs two of them in one
warm kernel against fresh kernels.
"""

from __future__ import annotations

import gc
import importlib
import logging
import os
import pkgutil
import random
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PROJECT_PACKAGES = ("judgepanel", "judgepanel_sim")
"""The top-level packages whose modules every notebook imports anew."""

NOT_WARMED = ("judgepanel.cli", "judgepanel.__main__")
"""What no notebook imports: the command line."""


_LoggerState = tuple[int, list[logging.Handler], bool, bool]


@dataclass
class FreshState:
    """What :func:`snapshot` recorded in a kernel that had just started."""

    cwd: str
    variables: dict[str, str]
    path: list[str]
    filters: list[Any]
    rc: dict[str, Any] = field(default_factory=dict)
    interactive: bool = False
    numpy_errors: dict[str, str] = field(default_factory=dict)
    numpy_print: dict[str, Any] = field(default_factory=dict)
    sklearn: dict[str, Any] = field(default_factory=dict)
    loggers: dict[str, _LoggerState] = field(default_factory=dict)
    logger_names: frozenset[str] = frozenset()

    def restore(self, shell: Any) -> None:
        """Put the kernel of ``shell`` (IPython's) back to this state."""
        _close_figures()
        shell.reset(new_session=True)
        os.chdir(self.cwd)
        os.environ.clear()
        os.environ.update(self.variables)
        sys.path[:] = self.path
        warnings.filters[:] = self.filters
        warnings._filters_mutated()  # type: ignore[attr-defined]
        self._restore_libraries()
        self._restore_logging()
        for name in [m for m in sys.modules if m.partition(".")[0] in PROJECT_PACKAGES]:
            del sys.modules[name]
        _reseed()
        gc.collect()

    def _restore_libraries(self) -> None:
        if "matplotlib" in sys.modules:
            import matplotlib as mpl

            dict.update(mpl.rcParams, self.rc)  # validated when recorded
            mpl.interactive(self.interactive)
        if "numpy" in sys.modules:
            import numpy as np

            np.seterr(**self.numpy_errors)
            np.set_printoptions(**self.numpy_print)
        if "pandas" in sys.modules:
            import pandas as pd

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                pd.reset_option("all")
        if "sklearn" in sys.modules:
            import sklearn

            sklearn.set_config(**self.sklearn)

    def _restore_logging(self) -> None:
        manager = logging.Logger.manager
        for name in [n for n in manager.loggerDict if n not in self.logger_names]:
            del manager.loggerDict[name]
        for name, (level, handlers, propagate, disabled) in self.loggers.items():
            logger = logging.getLogger(name or None)
            logger.setLevel(level)
            logger.handlers[:] = handlers
            logger.propagate, logger.disabled = propagate, disabled
        manager._clear_cache()  # type: ignore[attr-defined]


def warm_up() -> None:
    """Import the libraries the notebooks use, through every module of the project but
    the command line (:meth:`FreshState.restore` then forgets the project's modules), so
    that what importing a library does to the process's settings (its warning filters,
    say) is done before :func:`snapshot` records them."""
    import matplotlib.pyplot  # noqa: F401  (the inline backend is set up on this import)

    project = Path(__file__).resolve().parents[1]  # the judgepanel package
    for module in pkgutil.walk_packages([str(project)], "judgepanel."):
        if not module.name.startswith(NOT_WARMED):
            importlib.import_module(module.name)


def snapshot() -> FreshState:
    """Record this kernel's state (call it once, before the first notebook)."""
    state = FreshState(
        cwd=os.getcwd(),
        variables=dict(os.environ),
        path=list(sys.path),
        filters=list(warnings.filters),
        loggers=_loggers(),
        logger_names=frozenset(logging.Logger.manager.loggerDict),
    )
    if "matplotlib" in sys.modules:
        import matplotlib as mpl

        state.rc = dict(mpl.rcParams)
        state.interactive = mpl.is_interactive()
    if "numpy" in sys.modules:
        import numpy as np

        state.numpy_errors = dict(np.geterr())
        state.numpy_print = dict(np.get_printoptions())
    if "sklearn" in sys.modules:
        import sklearn

        state.sklearn = dict(sklearn.get_config())
    return state


def _loggers() -> dict[str, _LoggerState]:
    found = {"": logging.getLogger()}
    for name, logger in logging.Logger.manager.loggerDict.items():
        if isinstance(logger, logging.Logger):
            found[name] = logger
    return {n: (lg.level, list(lg.handlers), lg.propagate, lg.disabled) for n, lg in found.items()}


def _close_figures() -> None:
    if "matplotlib.pyplot" in sys.modules:
        import matplotlib.pyplot as plt

        plt.close("all")


def _reseed() -> None:
    """Fresh global random states, as an interpreter's start draws them."""
    random.seed()
    if "numpy" in sys.modules:
        import numpy as np

        np.random.seed()
