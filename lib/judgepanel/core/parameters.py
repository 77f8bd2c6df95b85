"""Run parameters: each study's typed model, and a run's values resolved against it.

A study declares the parameters its notebooks read, with their defaults, as a pydantic model
when it registers its planner (`judgepanel.core.scoring.register_planner`), so each default
lives in one place. A run's values are the model's defaults, then the runs file's global
``parameters:``, then the run's own, then a command's or a notebook's overrides. Global
parameters serve every study and each takes the keys its model knows; a key the run sets
itself, or an override, must be one of the run's study's keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError

from judgepanel.core.config import Run
from judgepanel.core.errors import ConfigError


def _listed(value: object) -> object:
    """One file named alone is a list of one."""
    return [value] if isinstance(value, str) else value


Files = Annotated[list[str], BeforeValidator(_listed)]
"""A parameter naming files: a list, or one path alone (``-p predictions=results.json``)."""


class StudyParameters(BaseModel):
    """What every study reads: bootstrap resamples, the seed and joblib workers."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    n_resamples: int = 10000
    seed: int = 0
    n_jobs: int = 1


PARAMETER_MODELS: dict[str, type[StudyParameters]] = {}
"""Dataset kind -> the parameter model of the study that plans it."""


def register_parameters(kind: str, model: type[StudyParameters]) -> None:
    """Declare ``model`` as the parameters of the study of dataset ``kind``."""
    if kind in PARAMETER_MODELS and PARAMETER_MODELS[kind] is not model:
        raise ValueError(f"a parameter model for dataset kind {kind!r} is already registered")
    PARAMETER_MODELS[kind] = model


def parameter_model(run: Run) -> type[StudyParameters]:
    """The parameter model of ``run``'s study (its datasets' kinds share one study)."""
    kinds = {run.profile.dataset(d).kind for d in run.datasets}
    models = {PARAMETER_MODELS.get(k) for k in kinds}
    if None in models:
        known = ", ".join(sorted(PARAMETER_MODELS)) or "none (import judgepanel.studies)"
        raise ConfigError(f"run {run.name!r}: no parameter model for {sorted(kinds)}; {known}")
    if len(models) != 1:
        raise ConfigError(f"run {run.name!r} mixes datasets of several studies: {sorted(kinds)}")
    return models.pop()  # type: ignore[return-value]


def resolve_parameters(
    run: Run, global_parameters: Mapping[str, Any], overrides: Mapping[str, Any] | None = None
) -> StudyParameters:
    """``run``'s parameters as its study's model: defaults, globals, the run's, overrides.

    Raises:
        ConfigError: a key the run sets or overrides that its study does not read (the
            message lists those it does), or a value of the wrong type.
    """
    model = parameter_model(run)
    fields = model.model_fields
    chosen = {k: v for k, v in global_parameters.items() if k in fields}
    chosen.update(run.own_parameters)
    chosen.update(overrides or {})
    unknown = sorted(set(chosen) - set(fields))
    if unknown:
        raise ConfigError(
            f"run {run.name!r}: {', '.join(unknown)} is not a parameter of its study; "
            f"parameters are: {', '.join(fields)}"
        )
    try:
        return model(**chosen)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"run {run.name!r}: {problems}") from None
