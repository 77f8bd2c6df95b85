"""The base of every error the library raises for a command to report.

It sits outside the layers (every layer may import it, and it imports nothing of the
package), so that ``datasets`` and ``stats``, which stand alone, raise it too. The typed
errors built on it live with the code that raises them; :mod:`judgepanel.core.errors`
holds the ones the core shares.
"""

from __future__ import annotations


class JudgepanelError(Exception):
    """An error the command line reports as its message alone, on stderr."""
