"""The exit codes of every ``judgepanel`` command, in one table.

A command returns one of these from its handler; nothing else in the package names a
number. Bad input (a missing or malformed dataset, rubric, answers file, runs file or
store; a flag out of its range) is :data:`BAD_INPUT` with one line on stderr naming the
file, column or item, whichever command it is given to.
"""

from __future__ import annotations

OK = 0
"""Done (``score``: calls may have failed; they are recorded and counted)."""

BAD_INPUT = 1
"""Bad input or configuration, one line on stderr; also a check that did not pass
(``check``, ``verify``) and output whose reader left early (``status | head``)."""

USAGE = 2
"""A usage error: argparse's own refusal of the arguments (an unknown flag, a missing one,
a value of the wrong type). argparse exits with it itself; it is named here so that no
command reuses it."""

BUDGET = 3
"""``score``, ``predict``: the run was stopped by its ceiling (``--max-cost``,
``--max-total-cost``); the closing note gives the command to resume."""

ABORTED = 4
"""``score``, ``predict``: the run stopped early, on an error every call would meet (a
rejected API key, an unknown model), an unreachable endpoint, or more failed calls than
``--max-failure-share``; the closing note gives the command to resume."""

RUN_STOPPED = 5
"""``report``: a run it scored was stopped, by its ceiling or early (the library raises
:class:`judgepanel.core.errors.RunStopped`; its message says which and how to resume)."""

CODES = {
    "OK": OK,
    "BAD_INPUT": BAD_INPUT,
    "USAGE": USAGE,
    "BUDGET": BUDGET,
    "ABORTED": ABORTED,
    "RUN_STOPPED": RUN_STOPPED,
}
"""Every code by name: each number means one thing."""
