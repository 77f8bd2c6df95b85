"""What a notebook's setup cell calls: its run, resolved from the runs file, and its outputs.

A notebook's parameters cell holds only what a user changes: the run's name, the runs file
and overrides. `open_run` derives everything else (profile, store, datasets, families, the
study's parameters, where tables go) from the runs file, the same way whether the report's
papermill or a person's JupyterLab runs the kernel. It also hands over the resolved
:class:`~judgepanel.core.config.Run` and its :class:`~judgepanel.core.config.Config`, which
a study's setup (``load_run``) takes: the data, the store and the scoring design come from
them, never from paths a notebook passes. Paths are the project's: the kernel's
working folder becomes the project root, wherever the kernel was started.

The report hands its kernels, as parameters, where its outputs are, the endpoint to send
calls to and the folder its kernels share fits in. A kernel without them (JupyterLab) writes
under ``outputs/interactive/<run>/``, never over the report, and sends to the endpoint of
``OPENAI_BASE_URL`` when one is set, as any client does.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgepanel.core.config import Config, Run, load_config
from judgepanel.core.endpoint import Endpoint
from judgepanel.core.errors import ConfigError
from judgepanel.core.parameters import resolve_parameters
from judgepanel.core.paths import DEFAULT_RUNS_FILE, project_root
from judgepanel.report.nbtools import Notebook, setup
from judgepanel.studies.common import fitcache

INTERACTIVE_DIR = "interactive"


def _shown(path: Path) -> str:
    """A path relative to the project when it lies inside (as the report shows paths)."""
    try:
        return Path(path).resolve().relative_to(project_root()).as_posix()
    except ValueError:
        return str(path)


def run_outputs(run: str, outputs: str | Path | None = None) -> tuple[Path, bool]:
    """The folder of ``run``'s tables and figures, and whether the report asked for it
    (``outputs``: the report's outputs folder)."""
    if outputs:
        return Path(outputs) / run, True
    return project_root() / "outputs" / INTERACTIVE_DIR / run, False


def run_variables(
    config: Config, run: Run, overrides: dict[str, Any] | None, tables: Path
) -> dict[str, Any]:
    """Every value a notebook of ``run`` reads, by the names the notebooks use."""
    profile = run.profile
    values: dict[str, Any] = {
        "run": run.name,
        "profile": profile.name,
        "runs_file": _shown(config.path),
        "store": _shown(profile.store),
        "families": dict(profile.families),
        "predeclared": list(profile.predeclared),
        "simulated": profile.simulated,
        "tables_dir": _shown(tables),
        "datasets": {
            d: {"kind": profile.dataset(d).kind, "root": _shown(profile.dataset(d).root)}
            for d in run.datasets
        },
    }
    if len(run.datasets) == 1:
        ref = profile.dataset(run.dataset)
        values.update(dataset=ref.name, dataset_kind=ref.kind, dataset_root=_shown(ref.root))
    values.update(resolve_parameters(run, config.parameters, overrides).model_dump())
    return values


class RunValues:
    """A run's values read by attribute (``params.store``, ``params.n_resamples``...).

    A notebook reads what it needs by name, so no cell depends on the order of a list;
    an unknown name raises an ``AttributeError`` that lists the run's values.
    """

    __slots__ = ("_values",)

    def __init__(self, values: dict[str, Any]) -> None:
        object.__setattr__(self, "_values", dict(values))

    def __getattr__(self, name: str) -> Any:
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        raise AttributeError(f"{name}: not a value of this run; it has {', '.join(values)}")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a run's values are read-only")

    def __dir__(self) -> list[str]:
        return sorted(object.__getattribute__(self, "_values"))


@dataclass(frozen=True)
class NotebookRun:
    """A notebook's run: the resolved run, its variables and its output context.

    Attributes:
        variables: the run's values by name (``store``, ``dataset_root``, ``n_resamples``...).
        notebook: the output context (tables, figures, sentences).
        interactive: True when no report asked for this execution.
        run: the resolved run (profile, datasets, parameters), which a study's
            ``load_run`` takes.
        config: the runs file it comes from (scoring designs and prices).
        endpoint: where a scoring notebook sends calls (``None``: nowhere; it reads the
            store only).
    """

    variables: dict[str, Any]
    notebook: Notebook
    interactive: bool
    run: Run
    config: Config
    endpoint: Endpoint | None = None

    def loader_keys(self, dataset: str | None = None) -> dict[str, Any]:
        """The keys a dataset of the run is read with (``missing_images``...), for
        `judgepanel.core.frames.scored_dataset`; ``dataset`` None: the run's only one."""
        return self.run.profile.dataset(dataset or self.run.dataset).loader_keys

    @property
    def params(self) -> RunValues:
        """The run's values by attribute: ``opened.params.store``."""
        return RunValues(self.variables)


def open_run(
    run: str,
    name: str,
    *,
    runs_file: str | Path | None = None,
    overrides: dict[str, Any] | None = None,
    endpoint: Endpoint | dict[str, Any] | str | None = None,
    outputs: str | Path | None = None,
    shared_fits: str | Path | None = None,
) -> NotebookRun:
    """Resolve ``run`` for the notebook ``name`` and start its output context.

    The report passes ``endpoint`` (as :meth:`Endpoint.as_parameter` gives it),
    ``outputs`` and ``shared_fits`` (the folder this report's kernels share their fits
    in); without them the notebook sends to ``OPENAI_BASE_URL`` when it is set, writes
    under ``outputs/interactive/`` and shares no fit.

    Raises:
        ConfigError: an unknown run (the message lists the runs), or an unknown parameter
            among ``overrides`` (it lists the parameters).
    """
    root = project_root()
    os.chdir(root)  # the report's kernels start here; JupyterLab's start in notebooks/
    path = Path(runs_file) if runs_file else Path(DEFAULT_RUNS_FILE)
    config = load_config(path if path.is_absolute() else root / path)
    chosen = config.run(run)
    if name not in chosen.notebooks:
        raise ConfigError(
            f"run {run!r} does not include {name}; its notebooks are: {', '.join(chosen.notebooks)}"
        )
    folder, from_report = run_outputs(run, outputs)
    fitcache.share_fits(shared_fits)
    where = Endpoint.of(endpoint)
    if where is None and not from_report:
        where = Endpoint.from_environment()
        where = where if where.base_url else None
    values = run_variables(config, chosen, overrides, folder / "tables")
    nb = setup(
        run=run,
        name=name,
        tables_dir=folder / "tables",
        simulated=chosen.profile.simulated,
        judges=tuple(chosen.profile.families),
    )
    if not from_report:
        print(
            f"{name} on run {run!r} ({chosen.profile.name}: {', '.join(chosen.datasets)}); "
            f"tables and figures go to {_shown(folder)}/"
        )
    return NotebookRun(values, nb, not from_report, run=chosen, config=config, endpoint=where)
