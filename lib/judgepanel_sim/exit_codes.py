"""The simulator's exit codes: those of `judgepanel`'s own table for the same outcomes
(a test holds them equal), so that ``judgepanel data synth`` and ``judgepanel sim-server``
answer bad input as every other command does."""

from __future__ import annotations

OK = 0
"""Done."""

BAD_INPUT = 1
"""Bad input (a size, world or price file the simulator cannot use; a port it cannot
listen on), one line on stderr."""
