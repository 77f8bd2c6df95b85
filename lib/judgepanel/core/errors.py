"""The error of a setting: one class, so every layer that reads settings can raise it.

It lives apart from `judgepanel.core.config` so that the modules below the runs file (the
send options that the runs file's schema is generated from) can raise it too.
"""

from __future__ import annotations


class ConfigError(ValueError):
    """``papermill_runs.yaml`` is missing something or names something that does not exist."""
