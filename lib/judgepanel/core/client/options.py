"""The client's options: :class:`ClientOptions`, the one send configuration, declared in
`judgepanel.core.sendconfig` (below the runs file, whose keys are generated from it)."""

from judgepanel.core.sendconfig import ClientOptions, RateLimits

__all__ = ["ClientOptions", "RateLimits"]
