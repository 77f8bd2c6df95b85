"""How calls are sent: every send option declared once (a field of :class:`ClientOptions`
made by :func:`option`), so the flags of ``score`` and ``predict`` and the keys of the runs
file's profiles and runs are generated from one place. :func:`resolve_options` layers the
values (defaults, profile, run, command line) and keeps each one's source (``--explain``).
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields, replace
from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from judgepanel.core.endpoint import Endpoint
from judgepanel.core.errors import ConfigError
from judgepanel.core.retry import MAX_FAILURE_SHARE, RetryPolicy

DEFAULT = "default"  # the source of a value nobody set
COMMAND_LINE = "command line"  # the source of a value a flag set
SCORE = ("score",)


class Frozen(BaseModel):
    """A frozen model that refuses unknown keys and, like a dataclass, takes its fields
    positionally too (pydantic's own validation, with its context, bypasses ``__init__``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(**dict(zip(type(self).model_fields, args, strict=False)), **kwargs)

    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]


class RateLimits(Frozen):
    """A model's requests and tokens (prompt plus ``max_tokens`` per choice) per minute at its
    provider, as a profile's ``limits:`` writes them; ``None``: unknown."""

    rpm: float | None = Field(None, gt=0)
    tpm: float | None = Field(None, gt=0)

    def __bool__(self) -> bool:
        return self.rpm is not None or self.tpm is not None


@dataclass(frozen=True)
class Declared:
    """The declaration of one send option (the metadata of its field)."""

    help: str  # the flag's help
    flag: str | None = ""  # "": ``--`` and its name; None: none; ``--no-``: turns a true off
    commands: tuple[str, ...] = ("score", "predict")  # the commands that take the flag
    profile: bool = False  # a profile of the runs file sets it (its key: the field's name)
    run: bool = False  # a run sets it too, over its profile's value
    ge: float | None = None  # bounds, checked whatever the source
    gt: float | None = None
    le: float | None = None
    file_none: Any = None  # a runs-file value that means "none" (``max_cost: 0``)
    arg_type: Callable[[str], Any] | None = None  # the flag's text to the value
    default_from: str = DEFAULT  # the source shown for the default

    def bounds(self) -> dict[str, float]:
        """The bounds as pydantic's ``Field`` takes them."""
        return {k: getattr(self, k) for k in ("ge", "gt", "le") if getattr(self, k) is not None}

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


def option(default: Any, help: str, *, factory: Any = None, **declared: Any) -> Any:
    """A field of :class:`ClientOptions` with its declaration (see :class:`Declared`)."""
    made = {"default_factory": factory} if factory else {"default": default}
    return field(**made, metadata={"declared": Declared(help, **declared)})


@dataclass(frozen=True)
class ClientOptions:
    """How one command sends its calls: the send options, and the fields the code sets."""

    endpoint: Endpoint = option(  # noqa: RUF009 (a field with its declaration)
        None, "endpoint base URL (the key still comes from the environment)",
        factory=Endpoint.from_environment, flag="--base-url", arg_type=Endpoint.at,
        default_from="environment",
    )  # fmt: skip
    concurrency: int = option(
        16, "requests in flight (adaptive pacing may hold fewer)", profile=True, ge=1
    )
    max_cost: float | None = option(
        None, "hard ceiling in USD for this command", profile=True, ge=0, file_none=0.0
    )
    max_total_cost: float | None = option(
        None, "hard ceiling in USD over everything the store recorded, across resumes "
        "(reservations of unanswered calls included)", commands=SCORE, profile=True, ge=0,
        file_none=0.0,
    )  # fmt: skip
    rpm: float | None = option(
        None, "each model's request limit per minute at the provider (paced to 97%% of it)",
        commands=SCORE, gt=0,
    )  # fmt: skip
    tpm: float | None = option(
        None, "each model's token limit per minute (prompt plus max_tokens per choice)",
        commands=SCORE, gt=0,
    )  # fmt: skip
    limits: Mapping[str, RateLimits] = option(
        None, "per model id, limits that replace rpm and tpm for that model (a profile's "
        "`limits:` names a family or a model id)", factory=dict, flag=None, profile=True,
    )  # fmt: skip
    samples_per_request: int = option(
        1, "repetitions of one prompt drawn per request with `n`", commands=SCORE,
        profile=True, run=True, ge=1,
    )  # fmt: skip
    batch: bool = option(
        False, "send the calls through the provider's batch API, or not", profile=True, run=True
    )
    batch_poll: float = option(30.0, "seconds between polls of open batches", profile=True, gt=0)
    wait: bool = option(
        True, "with --batch: submit and return; the same command run again collects them",
        flag="--no-wait", commands=SCORE,
    )  # fmt: skip
    timeout: float = option(60.0, "seconds per attempt", gt=0)
    max_attempts: int = option(6, "HTTP attempts per call")
    max_reasks: int = option(2, "re-asks after an unreadable answer", ge=0)
    retry_failed: bool = option(
        False, "also send calls whose failure is final (unreadable answers, 4xx) again; "
        "retryable failures are sent again by any resume",
    )  # fmt: skip
    max_failure_share: float = option(
        MAX_FAILURE_SHARE, "stop once more than this share of the calls sent failed", ge=0, le=1
    )
    progress: bool = option(True, "no progress line", flag="--no-progress")
    limit_share: float = 1.0  # this process's part of a shared key's limits (1 / lanes)
    adaptive: bool = True  # adopt the limits the headers announce, halve concurrency on a 429
    policy: RetryPolicy | None = None  # default: ``RetryPolicy(max_attempts)``
    sources: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        for name, (declared, _) in declared_options().items():
            value = getattr(self, name)
            if problem := declared.problem(value):
                raise ConfigError(f"{declared.flag or name} {value}: {problem}")
        if not 0.0 < self.limit_share <= 1.0:
            raise ConfigError(f"limit share {self.limit_share}: expected a share in (0, 1]")

    def limits_for(self, model: str) -> RateLimits:
        """The limits this process paces ``model`` to (its share of the provider's)."""
        got = self.limits.get(model, RateLimits(self.rpm, self.tpm))
        return RateLimits(*(v if v is None else v * self.limit_share for v in (got.rpm, got.tpm)))

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
                value = value.shown()
            elif isinstance(value, Mapping):
                value = ", ".join(f"{k}: rpm {v.rpm}, tpm {v.tpm}" for k, v in value.items())
            rows.append((name, "none" if value in (None, "") else str(value), self.source(name)))
        return rows


@cache
def declared_options() -> dict[str, tuple[Declared, Any]]:
    """Every send option of :class:`ClientOptions`: name -> (declaration, type)."""
    hints, out = typing.get_type_hints(ClientOptions), {}
    for f in (f for f in fields(ClientOptions) if f.metadata):
        declared = f.metadata["declared"]
        flag = "--" + f.name.replace("_", "-") if declared.flag == "" else declared.flag
        out[f.name] = (replace(declared, flag=flag), hints[f.name])
    return out


def default_of(name: str) -> Any:
    """The declared default of option ``name`` (a factory's value is made anew)."""
    f = ClientOptions.__dataclass_fields__[name]
    return f.default if f.default_factory is MISSING else f.default_factory()


def without_none(annotation: Any) -> Any:
    """``X`` of ``X | None`` (any other annotation as it is)."""
    args = typing.get_args(annotation)
    rest = [a for a in args if a is not type(None)]
    return rest[0] if type(None) in args and len(rest) == 1 else annotation


def file_options(spec: BaseModel, level: str) -> dict[str, Any]:
    """The send options a ``profile`` or ``run`` of the runs file sets, as the fields take them."""
    options = declared_options()
    return {
        name: None if (value := getattr(spec, name)) == options[name][0].file_none else value
        for name in spec.model_fields_set & options.keys()
        if getattr(options[name][0], level)
    }


def send_keys(level: str) -> dict[str, Any]:
    """The runs-file keys of the send options a ``profile`` or a ``run`` sets, as pydantic
    fields: a profile's default is the declared one, a run's is unset (its profile's applies)."""
    keys: dict[str, Any] = {}
    for name, (declared, annotation) in declared_options().items():
        if getattr(declared, level):
            kind, default = without_none(annotation), default_of(name)
            if level == "run":
                kind, default = kind | None, None
            made = {"default_factory": dict} if isinstance(default, dict) else {"default": default}
            keys[name] = (kind, Field(**made, **declared.bounds()))
    return keys


def resolve_options(*layers: tuple[str, Mapping[str, Any]]) -> ClientOptions:
    """The send configuration of the declared defaults and ``layers``, each (its source, option
    name -> value, ``None``: unset); a later layer wins. ``limit_share`` and such may be given."""
    for name in (name for _, given in layers for name in given):
        if name not in ClientOptions.__dataclass_fields__ or name == "sources":
            raise ValueError(f"{name!r} is not a field of ClientOptions")
    values = {n: v for _, given in layers for n, v in given.items() if v is not None}
    sources = {n: where for where, given in layers for n, v in given.items() if v is not None}
    return ClientOptions(**values, sources=sources)
