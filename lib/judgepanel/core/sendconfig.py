"""How calls are sent: every send option declared once, resolved into one frozen configuration.

Each option is a field of :class:`ClientOptions` declared with :func:`option`: its type,
default, help, flag, whether a profile or a run of ``papermill_runs.yaml`` sets it, and its
bounds. The flags of ``score`` and ``predict`` (``judgepanel.cli``) and the keys of the runs
file's profiles and runs (`judgepanel.core.config`) are generated from the declarations.
:func:`resolve_options` layers them (defaults, profile, run, command line; a later layer
wins) and keeps where each value came from (``judgepanel check --explain``).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from judgepanel.core.endpoint import Endpoint
from judgepanel.core.errors import ConfigError
from judgepanel.core.retry import MAX_FAILURE_SHARE, RetryPolicy

DEFAULT = "default"
"""The source of a value nobody set."""
COMMAND_LINE = "command line"
"""The source of a value a flag set."""


class Frozen(BaseModel):
    """A frozen model that refuses unknown keys and, like a dataclass, takes its fields
    positionally too (pydantic's own validation, with its context, bypasses ``__init__``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(**dict(zip(type(self).model_fields, args, strict=False)), **kwargs)

    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]


class RateLimits(Frozen):
    """A model's provider limits, as a profile's ``limits:`` writes them: requests and tokens
    (the prompt plus ``max_tokens`` of every choice asked for) per minute; ``None``: unknown."""

    rpm: float | None = Field(None, gt=0)
    tpm: float | None = Field(None, gt=0)

    def scaled(self, share: float) -> RateLimits:
        """These limits times ``share`` (a process's part of limits it shares with others)."""
        return RateLimits(
            None if self.rpm is None else self.rpm * share,
            None if self.tpm is None else self.tpm * share,
        )

    def __bool__(self) -> bool:
        return self.rpm is not None or self.tpm is not None


@dataclass(frozen=True)
class Declared:
    """The declaration of one send option (the metadata of its field).

    Attributes:
        help: what it does, as the flag's help says it.
        flag: its flag (``None``: none); a ``--no-`` flag turns a true default off.
        commands: the commands that take the flag.
        profile: a profile of the runs file sets it (key: the field's name).
        run: a run sets it too, over its profile's value.
        ge, gt, le: bounds of a number (checked for every source).
        file_none: a runs-file value that means "none" (``max_cost: 0``).
        arg_type: turns the flag's text into the field's value.
        default_from: the source shown for the default.
    """

    help: str
    flag: str | None = None
    commands: tuple[str, ...] = ("score", "predict")
    profile: bool = False
    run: bool = False
    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    file_none: Any = None
    arg_type: Callable[[str], Any] | None = None
    default_from: str = DEFAULT

    def bounds(self) -> dict[str, float]:
        """The bounds as pydantic's ``Field`` takes them."""
        named = (("ge", self.ge), ("gt", self.gt), ("le", self.le))
        return {k: v for k, v in named if v is not None}

    def problem(self, value: Any) -> str | None:
        """What is wrong with ``value`` (``None``: nothing)."""
        if not isinstance(value, int | float) or isinstance(value, bool):
            return None
        if self.ge is not None and self.le is not None:
            ok, want = self.ge <= value <= self.le, f"a share in [{self.ge:g}, {self.le:g}]"
        elif self.gt is not None:
            ok, want = value > self.gt, "a positive number" if self.gt == 0 else f"> {self.gt:g}"
        elif self.ge is not None:
            ok, want = value >= self.ge, f"at least {self.ge:g}"
        else:
            return None
        return None if ok else f"expected {want}"


def option(
    default: Any = dataclasses.MISSING,
    *,
    help: str,
    default_factory: Any = dataclasses.MISSING,
    **declared: Any,
) -> Any:
    """A field of :class:`ClientOptions` with its declaration (see :class:`Declared`)."""
    meta = {"declared": Declared(help, **declared)}
    if default_factory is not dataclasses.MISSING:
        return field(default_factory=default_factory, metadata=meta)
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class ClientOptions:
    """How one command sends its calls: the send options (the fields declared with
    :func:`option`), and what the code that runs a command sets.

    Attributes:
        limit_share: this process's part of every limit, when processes share one key
            (the report's scoring lanes each pace at ``1 / lanes`` of it).
        adaptive: follow the endpoint: adopt a limit its headers announce, wait when they
            say it runs low, halve a model's concurrency on a 429 and win it back slowly
            (covers limits nobody configured). A 429 pauses its model's lane either way.
        policy: back-off settings (default: ``RetryPolicy(max_attempts)``).
        sources: option name -> where its value came from (``default``, a profile, a
            run, ``command line``...).
    """

    endpoint: Endpoint = option(  # noqa: RUF009 (a field with its declaration)
        help="endpoint base URL (the key still comes from the environment)",
        default_factory=Endpoint.from_environment,
        flag="--base-url",
        arg_type=Endpoint.at,
        default_from="environment",
    )
    concurrency: int = option(
        16, help="requests in flight (adaptive pacing may hold fewer)", flag="--concurrency",
        profile=True, ge=1,
    )  # fmt: skip
    max_cost: float | None = option(
        None, help="hard ceiling in USD for this command", flag="--max-cost", profile=True,
        ge=0, file_none=0.0,
    )  # fmt: skip
    max_total_cost: float | None = option(
        None,
        help="hard ceiling in USD over everything the store recorded, across resumes "
        "(reservations of unanswered calls included)",
        flag="--max-total-cost", commands=("score",), profile=True, ge=0, file_none=0.0,
    )  # fmt: skip
    rpm: float | None = option(
        None,
        help="each model's request limit per minute at the provider (paced to 97%% of it)",
        flag="--rpm", commands=("score",), gt=0,
    )  # fmt: skip
    tpm: float | None = option(
        None,
        help="each model's token limit per minute (prompt plus max_tokens per choice)",
        flag="--tpm", commands=("score",), gt=0,
    )  # fmt: skip
    limits: Mapping[str, RateLimits] = option(
        help="per model id, limits that replace rpm and tpm for that model (a profile's "
        "`limits:` names a family or a model id)",
        default_factory=dict, profile=True,
    )  # fmt: skip
    samples_per_request: int = option(
        1, help="repetitions of one prompt drawn per request with `n`",
        flag="--samples-per-request", commands=("score",), profile=True, run=True, ge=1,
    )  # fmt: skip
    batch: bool = option(
        False, help="send the calls through the provider's batch API, or not", flag="--batch",
        profile=True, run=True,
    )  # fmt: skip
    batch_poll: float = option(
        30.0, help="seconds between polls of open batches", flag="--batch-poll", profile=True,
        gt=0,
    )  # fmt: skip
    wait: bool = option(
        True, help="with --batch: submit and return; the same command run again collects them",
        flag="--no-wait", commands=("score",),
    )  # fmt: skip
    timeout: float = option(60.0, help="seconds per attempt", flag="--timeout", gt=0)
    max_attempts: int = option(6, help="HTTP attempts per call", flag="--max-attempts")
    max_reasks: int = option(
        2, help="re-asks after an unreadable answer", flag="--max-reasks", ge=0
    )
    retry_failed: bool = option(
        False,
        help="also send calls whose failure is final (unreadable answers, 4xx) again; "
        "retryable failures are sent again by any resume",
        flag="--retry-failed",
    )
    max_failure_share: float = option(
        MAX_FAILURE_SHARE, help="stop once more than this share of the calls sent failed",
        flag="--max-failure-share", ge=0, le=1,
    )  # fmt: skip
    progress: bool = option(True, help="no progress line", flag="--no-progress")
    limit_share: float = 1.0
    adaptive: bool = True
    policy: RetryPolicy | None = None
    sources: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        for name, (declared, _) in declared_options().items():
            value = getattr(self, name)
            problem = declared.problem(value)
            if problem:
                raise ConfigError(f"{declared.flag or name} {value}: {problem}")
        if not 0.0 < self.limit_share <= 1.0:
            raise ConfigError(f"limit share {self.limit_share}: expected a share in (0, 1]")

    def limits_for(self, model: str) -> RateLimits:
        """The limits this process paces ``model`` to (its share of the provider's)."""
        limits = self.limits.get(model, RateLimits(self.rpm, self.tpm))
        return limits.scaled(self.limit_share)

    def retry_policy(self) -> RetryPolicy:
        """The back-off settings, ``policy`` or the default with ``max_attempts``."""
        policy = self.policy or RetryPolicy(max_attempts=self.max_attempts)
        if policy.max_attempts < 1:
            raise ConfigError("max_attempts must be at least 1")
        return policy

    def source(self, name: str) -> str:
        """Where the value of option ``name`` came from."""
        return self.sources.get(name) or declared_options()[name][0].default_from

    def explain(self) -> list[tuple[str, str, str]]:
        """Every send option: its name, its value as shown, and where it came from."""
        rows = []
        for name in declared_options():
            value = getattr(self, name)
            if isinstance(value, Endpoint):
                shown = value.shown()
            elif isinstance(value, Mapping):
                shown = ", ".join(f"{k}: {_shown_limits(v)}" for k, v in value.items()) or "none"
            else:
                shown = "none" if value is None else str(value)
            rows.append((name, shown, self.source(name)))
        return rows


def _shown_limits(limits: Any) -> str:
    if isinstance(limits, RateLimits):
        return f"rpm {limits.rpm}, tpm {limits.tpm}"
    return str(limits)


_DECLARED: dict[str, tuple[Declared, Any]] = {}


def declared_options() -> dict[str, tuple[Declared, Any]]:
    """Every send option of :class:`ClientOptions`: name -> (declaration, type)."""
    if not _DECLARED:
        hints = typing.get_type_hints(ClientOptions)
        for f in dataclasses.fields(ClientOptions):
            if "declared" in f.metadata:
                _DECLARED[f.name] = (f.metadata["declared"], hints[f.name])
    return _DECLARED


def default_of(name: str) -> Any:
    """The declared default of option ``name`` (a factory's value is made anew)."""
    f = ClientOptions.__dataclass_fields__[name]
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return f.default


def without_none(annotation: Any) -> Any:
    """``X`` of ``X | None`` (any other annotation as it is)."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        rest = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(rest) == 1:
            return rest[0]
    return annotation


def file_options(spec: BaseModel, level: str) -> dict[str, Any]:
    """The send options a profile or run of the runs file sets (``level``: ``profile`` or
    ``run``), its keys as written, turned into the fields' values."""
    out: dict[str, Any] = {}
    for name in spec.model_fields_set:
        declared = declared_options().get(name, (None, None))[0]
        if declared is None or not getattr(declared, level):
            continue
        value = getattr(spec, name)
        none = declared.file_none is not None and value == declared.file_none
        out[name] = None if none else value
    return out


def send_keys(level: str) -> dict[str, Any]:
    """The runs-file keys of the send options that a ``profile`` or a ``run`` sets, as
    pydantic fields: a profile's default is the declared one, a run's is unset (its
    profile's value applies)."""
    keys: dict[str, Any] = {}
    for name, (declared, annotation) in declared_options().items():
        if not getattr(declared, level):
            continue
        kind = without_none(annotation)
        if level == "run":
            keys[name] = (kind | None, Field(None, **declared.bounds()))
        elif isinstance(default_of(name), dict):
            keys[name] = (kind, Field(default_factory=dict, **declared.bounds()))
        else:
            keys[name] = (kind, Field(default_of(name), **declared.bounds()))
    return keys


def resolve_options(*layers: tuple[str, Mapping[str, Any]]) -> ClientOptions:
    """The send configuration of the declared defaults and ``layers`` in order.

    Each layer is (its source, option name -> value); a later layer wins, and ``None``
    means the layer does not set that option. Fields that are no options (``limit_share``)
    may be given too.
    """
    known = ClientOptions.__dataclass_fields__
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for where, given in layers:
        for name, value in given.items():
            if name not in known or name == "sources":
                raise ValueError(f"{name!r} is not a field of ClientOptions")
            if value is not None:
                values[name] = value
                sources[name] = where
    return ClientOptions(**values, sources=sources)
