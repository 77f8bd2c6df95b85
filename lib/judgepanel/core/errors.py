"""The errors library code raises where a command would stop; only the command line
(``judgepanel.cli``) turns them into exit codes and one-line messages.

Library code never exits: a function that cannot go on raises a :class:`JudgepanelError`
(or one of the module errors that predate it), so that a notebook, a test or another
program calling it decides what a stop means. :class:`ConfigError` lives here, apart from
``judgepanel.core.config``, so that the modules below the runs file (the send options its
schema is generated from) can raise it too.
"""

from __future__ import annotations

from judgepanel.errors import JudgepanelError

__all__ = ["ConfigError", "RunStopped"]


class RunStopped(JudgepanelError):
    """A run was cut short (by its budget, or by an error every call would meet) while a
    report scored it; the message names the run, says why and gives the command to resume."""


class ConfigError(JudgepanelError, ValueError):
    """``papermill_runs.yaml`` is missing something or names something that does not exist."""
