"""Execute the notebooks of a profile with papermill and render them to HTML.

For each run of ``papermill_runs.yaml`` this writes ``outputs/<run>/<NN_name>.ipynb`` and
``.html`` (code visible, figures inline), the tables each notebook shows under
``outputs/<run>/tables/``, each notebook's outcome in ``outputs/<run>/notebooks.json``, and
finally ``outputs/index.html``, which links every executed notebook with its headline
numbers. A failing cell makes the command exit non-zero, naming the notebook and the cell.

The file reads top to bottom as a report runs: :func:`run_report` makes its
:class:`ReportPlan` once (:func:`prepare`), opens what it runs on (:func:`opened`), then
scores (:func:`score`), executes the steps (:func:`execute`) and publishes the ledger, the
index and the manifest (:func:`publish`). One notebook is :func:`execute_notebook`. With
one job slot the steps run here, one after the other; several at a time is
:mod:`judgepanel.report.schedule`'s.
"""

from __future__ import annotations

import copy
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import yaml

import judgepanel.studies  # noqa: F401  (each study registers its planner and parameters)
from judgepanel.core.config import MISSING_IMAGES, Config, Run, load_config, takes_missing_images
from judgepanel.core.endpoint import SIMULATOR, Endpoint
from judgepanel.core.errors import ConfigError
from judgepanel.core.local_sim import SimConfig, SimProcess, start_sim_servers
from judgepanel.core.parameters import parameter_model, resolve_parameters
from judgepanel.core.paths import NOTEBOOK_DIR, project_root
from judgepanel.errors import JudgepanelError
from judgepanel.report.explorer import EXPLORER_DIR, build_explorer
from judgepanel.report.index import (
    NotebookResult,
    headline_lines,
    record_outcome,
    write_index,
)
from judgepanel.report.kernels import kernel_threads
from judgepanel.report.ledger import write_ledger
from judgepanel.report.manifest import write_manifest
from judgepanel.report.page import path_replacements, render_page, scrub_paths
from judgepanel.report.provenance import provenance, write_provenance
from judgepanel.report.schedule import JobPool, score_in_lanes, usable_cores
from judgepanel.report.steps import (
    Job,
    NothingWaits,
    Progress,
    ReportStep,
    data_keys,
    in_order,
    report_steps,
    score_in_order,
    scoring_steps,
)
from judgepanel.report.timings import Timings, cpu_since, process_cpu
from judgepanel.report.warm_kernels import notebook_kernel


class ReportError(JudgepanelError, ValueError):
    """A report request that cannot run as asked (unknown run, mismatch, empty selection)."""


@dataclass(frozen=True)
class ReportRequest:
    """What ``judgepanel report`` was asked to do.

    Attributes:
        profile: the profile whose runs are executed.
        runs: only these runs (default: every run of the profile).
        only: only notebooks whose name starts with one of these prefixes.
        runs_file: the runs file (default: ``papermill_runs.yaml`` at the project root).
        outputs: where the executed notebooks, HTML and tables go.
        start_sim: start the simulated judge server for the duration of the command.
        score: score each run's dataset before its notebooks.
        overrides: notebook parameters set for this command (``-p key=value``).
        quick: the pages say that this is a quick run of shrunk worlds.
        progress: show each notebook's cells as they run.
        jobs: notebooks executed at once, each scoring process counted as one (default:
            usable cores).
        score_lanes: runs scored side by side in worker processes (default: two when the
            runs' profiles are simulated and two cores are usable, else one; against a
            remote endpoint the endpoint, not the client, bounds the rate).
        pages: render the HTML pages, the call explorers and the index; without them the
            executed notebooks, their tables and the manifest are written (a check that
            the tables reproduce needs no more).
        rubric: a rubric file or folder replacing every run's (``--rubric``).
        fresh_kernels: start a kernel for every notebook (``--fresh-kernels``) instead of
            reusing warm ones between the notebooks of a lane; the pages are the same.
        missing_images: ``error`` or ``skip``, replacing every rated dataset entry's
            ``missing_images`` (``--missing-images``; None: the runs file's).
    """

    profile: str = "demo"
    runs: tuple[str, ...] = ()
    only: tuple[str, ...] = ()
    runs_file: Path | None = None
    outputs: Path = Path("outputs")
    start_sim: bool = False
    score: bool = False
    overrides: dict[str, Any] = field(default_factory=dict)
    quick: bool = False
    progress: bool = False
    jobs: int | None = None
    score_lanes: int | None = None
    pages: bool = True
    rubric: Path | None = None
    missing_images: str | None = None
    fresh_kernels: bool = False


@dataclass(frozen=True)
class ReportPlan:
    """What a report does, fixed before anything runs: made once by :func:`prepare`.

    Attributes:
        request: the request as run: reading the runs file derived from the one named
            (``--quick``, ``--rubric``, ``--missing-images``), with a quick report's
            overrides.
        config: that runs file, parsed.
        origin: the folder of the runs file the user named (a page shows paths from it).
        chosen: the selected runs, each with its selected notebooks.
        scoring: the runs whose scoring the report does (``--score``), each plan once.
        outputs: the outputs folder, absolute.
        slots: steps run at once (``--jobs``), each scoring process counted as one.
        lanes: runs scored side by side (``--score-lanes``).
    """

    request: ReportRequest
    config: Config
    origin: Path
    chosen: tuple[tuple[Run, tuple[str, ...]], ...]
    scoring: tuple[Run, ...]
    outputs: Path
    slots: int
    lanes: int

    @property
    def runs(self) -> list[Run]:
        """The selected runs, in the runs file's order."""
        return [run for run, _ in self.chosen]


@dataclass
class ReportSession:
    """What a running report holds, released by :func:`opened` however the report ends.

    Attributes:
        timings: where the time went (``outputs/_timings.json``).
        workers: the processes the call explorers and pages are built in, beside the
            scoring and the kernels.
        shared_fits: the folder the kernels of this report, and only they, share their
            combiner fits in (`judgepanel.studies.common.fitcache`); it starts empty and
            goes with the report.
        servers: the simulated judge servers started for it (``--start-sim``).
        endpoints: where it sends calls (none: the notebooks read the store only).
        context: what every notebook is handed besides its run.
        steps: the call explorers and notebooks, in the report's order.
        pool: what runs the steps several at a time (None with one job slot).
    """

    timings: Timings
    workers: ProcessPoolExecutor
    shared_fits: Path
    servers: list[SimProcess] = field(default_factory=list)
    endpoints: list[Endpoint] = field(default_factory=list)
    context: KernelContext = field(default_factory=lambda: KernelContext())
    steps: list[ReportStep] = field(default_factory=list)
    pool: JobPool | None = None


def run_report(request: ReportRequest, config: Config | None = None) -> int:
    """Optionally start the simulator and score, and execute every selected notebook.

    ``config`` is the runs file of ``request`` already parsed (else it is read here). The
    simulated servers' endpoints, the outputs and the folder of shared fits are handed to
    the scoring and to each notebook as arguments and parameters: the process's
    environment is never changed. Notebooks run up to ``request.jobs`` at a time, each as
    soon as the datasets it reads are scored, while later runs are still scoring (see
    :mod:`judgepanel.report.schedule`). Returns 0 when every notebook ran, 1 when one
    failed (each failure is printed). Raises ``ReportError`` when the request selects
    nothing or names what does not exist.
    """
    plan = prepare(request, config)
    with opened(plan) as session:
        score(plan, session)
        results = execute(plan, session)
        index = publish(plan, session, results)
    return conclude(plan, results, index, session.timings.now())


def prepare(request: ReportRequest, config: Config | None = None) -> ReportPlan:
    """The plan of ``request``: its runs file derived and parsed, its runs and notebooks
    selected (once), its job slots and scoring lanes counted, its outputs folder made.

    Raises:
        ReportError: no slot to run in, or the selection cannot run (see
            :func:`select_notebooks`).
    """
    slots = usable_cores() if request.jobs is None else request.jobs
    if slots < 1:
        raise ReportError(f"--jobs {slots}: at least one notebook must be able to run")
    named = config if config is not None else load_config(request.runs_file)
    derived = derived_request(named, request)
    config = named if derived is request else load_config(derived.runs_file)
    chosen = select_notebooks(config, derived)
    runs = [run for run, _ in chosen]
    lanes = derived.score_lanes
    if lanes is None:
        lanes = min(2, slots) if all(r.profile.simulated for r in runs) else 1
    outputs = Path(request.outputs).resolve()
    outputs.mkdir(parents=True, exist_ok=True)
    return ReportPlan(
        request=derived,
        config=config,
        origin=named.path.resolve().parent,
        chosen=tuple((run, tuple(names)) for run, names in chosen),
        scoring=tuple(scoring_steps(runs) if request.score else ()),
        outputs=outputs,
        slots=slots,
        lanes=lanes,
    )


@contextmanager
def opened(plan: ReportPlan) -> Iterator[ReportSession]:
    """Start what the report runs on (its worker processes, simulated servers, folder of
    shared fits) and plan its steps; on the way out, however the report ends, stop and
    remove them all and write where the time went."""
    session = ReportSession(
        Timings(),
        ProcessPoolExecutor(max_workers=plan.slots, mp_context=get_context("spawn")),
        Path(tempfile.mkdtemp(prefix="judgepanel-fits-")),
    )
    try:
        session.servers = start_servers(plan, session.timings)
        session.endpoints = report_endpoints(session.servers)
        # A simulated server needs no key: a real one in the environment is not sent to it.
        session.context = KernelContext(
            endpoint=session.endpoints[0] if session.endpoints else None,
            shared_fits=session.shared_fits,
            threads=kernel_threads(usable_cores(), plan.slots),
            warm=not plan.request.fresh_kernels,
        )
        session.steps = report_steps(
            plan.chosen,
            plan.outputs,
            lambda run, name: notebook_sends_calls(plan.config, run, name, plan.request.overrides),
            explorers=plan.request.pages,
            sends=bool(session.endpoints),
        )
        if plan.slots > 1:
            session.pool = JobPool(
                [s.job for s in session.steps],
                plan.slots,
                partial(run_job, plan, session),
                unscored=set().union(*map(data_keys, plan.scoring)),
                echo=echo,
            )
        yield session
    except BaseException:
        if session.pool is not None:
            session.pool.close()  # the steps already running finish; no other one starts
        raise
    finally:
        session.workers.shutdown(cancel_futures=True)
        for server in session.servers:
            server.stop()
        shutil.rmtree(session.shared_fits, ignore_errors=True)
        request = plan.request
        session.timings.write(
            plan.outputs, profile=request.profile, jobs=plan.slots, quick=request.quick
        )


def score(plan: ReportPlan, session: ReportSession) -> None:
    """Score the plan's runs, telling the pool (with several job slots) each dataset once
    the last run scoring it is over: in lanes when several runs may be scored side by
    side, else one after the other in this process."""
    waiting = NothingWaits() if session.pool is None else session.pool
    if plan.lanes > 1 and len(plan.scoring) > 1:
        score_in_lanes(
            plan.config,
            plan.scoring,
            waiting,
            session.timings,
            plan.lanes,
            session.endpoints,
            {s.base_url: s.process.pid for s in session.servers},
        )
    else:
        endpoint = session.endpoints[0] if session.endpoints else None
        server = session.servers[0].process.pid if session.servers else None
        score_in_order(plan.config, plan.scoring, waiting, session.timings, endpoint, server)


def execute(plan: ReportPlan, session: ReportSession) -> list[NotebookResult]:
    """Run the call explorers and notebooks; return the notebooks' results in order.

    With several job slots the pool started them as the scoring released their data, and
    is waited for. With one they run here, one after the other in their order, with no
    thread between the report and papermill. Either way a step that raised stops no other
    one, and is raised once they all ran.

    Raises:
        RuntimeError: a step raised (a failing notebook does not raise: its result says).
    """
    if session.pool is not None:
        return session.pool.wait()
    jobs = [s.job for s in session.steps]
    progress = Progress(jobs, echo)
    results: dict[int, NotebookResult] = {}
    errors: list[Exception] = []
    for job in in_order(jobs):
        progress.started(job)
        result, error = None, None
        try:
            result = step_action(plan, session, session.steps[job.index])()
        except Exception as exc:  # kept, raised once the other steps have run
            error = exc
            errors.append(exc)
        progress.ended(job, result, error)
        if result is not None:
            results[job.index] = result
    if errors:
        raise RuntimeError(f"a report step failed: {errors[0]}") from errors[0]
    return [results[i] for i in sorted(results)]


def publish(plan: ReportPlan, session: ReportSession, results: list[NotebookResult]) -> Path | None:
    """Write the claims ledger, the index (a report with pages) and the manifest; return
    the index (None without pages)."""
    with session.timings.step("index"):
        write_ledger(plan.outputs, plan.config)
        index = write_index(plan.outputs, results, plan.config) if plan.request.pages else None
        kind = "quick" if plan.request.quick else "full"
        write_manifest(plan.outputs, kind, plan.request.profile)
    return index


def conclude(
    plan: ReportPlan, results: list[NotebookResult], index: Path | None, seconds: float
) -> int:
    """Print the report's summary and each failure; 0 when every notebook ran, else 1."""
    print(summary_text(results, seconds, plan.outputs, index), flush=True)
    failures = [r for r in results if not r.ok]
    for r in failures:
        print(f"error: {r.run}/{r.error}", file=sys.stderr)
    return 1 if failures else 0


def echo(line: str) -> None:
    """Print a line of the report's progress at once."""
    print(line, flush=True)


def start_servers(plan: ReportPlan, timings: Timings) -> list[SimProcess]:
    """With ``--start-sim``, one simulated judge server per scoring lane (one without
    ``--score``); none otherwise."""
    if not plan.request.start_sim:
        return []
    with timings.step("simulator"):
        # it reports its own charge, as OpenRouter does; its prompt cache stays off:
        # which of several repetitions in flight at once pays for the uncached
        # prompt depends on timing, and tables that read some rows' costs would
        # then differ between runs (00 measures the cache on its own servers).
        # One server per scoring lane: a server answers on one core, and every
        # request carries its seed, so servers of one seed answer it alike.
        lanes = plan.lanes if plan.request.score else 1
        servers = start_sim_servers(max(1, lanes), SimConfig(report_cost=True))
    listening = ", ".join(s.base_url for s in servers)
    print(f"simulated judge server listening at {listening}", flush=True)
    return servers


def report_endpoints(servers: list[SimProcess]) -> list[Endpoint]:
    """Where the report sends calls: its simulated servers, else the endpoint of
    ``OPENAI_BASE_URL`` when one is set (none: the notebooks read the store only)."""
    if servers:
        return [Endpoint.simulator(s.base_url) for s in servers]
    endpoint = Endpoint.from_environment()
    return [endpoint] if endpoint.base_url else []


def run_job(plan: ReportPlan, session: ReportSession, job: Job) -> NotebookResult | None:
    """Run the step of ``job`` (the pool's threads call this)."""
    return step_action(plan, session, session.steps[job.index])()


def step_action(
    plan: ReportPlan, session: ReportSession, step: ReportStep
) -> Callable[[], NotebookResult | None]:
    """What running ``step`` calls: build its call explorer, or execute its notebook (its
    page rendered in a worker process). A ``partial``, so that running it puts no frame of
    its own between the report and papermill."""
    if step.explorer is not None:
        return partial(explore, plan, session, *step.explorer)
    assert step.run is not None
    request = plan.request
    return partial(
        execute_notebook,
        plan.config,
        step.run,
        step.notebook,
        plan.outputs,
        overrides=request.overrides,
        quick=request.quick,
        progress=request.progress and plan.slots == 1,
        render=partial(render_in, session.workers, plan.origin) if request.pages else no_page,
        context=session.context,
        timings=session.timings,
    )


def explore(plan: ReportPlan, session: ReportSession, profile: str, dataset: str) -> None:
    """Build the call explorer of ``dataset`` in a worker process, and say where it is."""
    with session.timings.step("explorer", profile=profile, dataset=dataset):
        page = session.workers.submit(
            build_explorer, plan.config.profile(profile), dataset, plan.outputs
        ).result()
    if page is not None:
        print(f"call explorer: {page.relative_to(plan.outputs)}", flush=True)


def render_in(workers: ProcessPoolExecutor, origin: Path, *args: Any, **kwargs: Any) -> Path:
    """:func:`render_run_page` in one of ``workers``: the HTML export is pure-Python work
    that would otherwise hold this process's interpreter while other kernels report."""
    return workers.submit(render_run_page, *args, origin=origin, **kwargs).result()


def no_page(*args: Any, **kwargs: Any) -> None:
    """A report of tables only renders no page."""
    return None


def shown_path(path: Path) -> str:
    """A path as the notebooks receive it: relative to the project when it lies inside.

    The kernels run in the project folder, so a relative path reads the same file and the
    executed notebook does not carry the machine's layout.
    """
    path = Path(path)
    try:
        return path.resolve().relative_to(project_root()).as_posix()
    except ValueError:
        return str(path)


def run_overrides(run: Run, overrides: dict[str, Any] | None) -> dict[str, Any]:
    """The overrides of a command that ``run``'s study reads (``-p`` serves every run)."""
    fields = parameter_model(run).model_fields
    return {k: v for k, v in (overrides or {}).items() if k in fields}


@dataclass(frozen=True)
class KernelContext:
    """What a report hands every notebook besides its run: where to send calls, where its
    outputs go, where the kernels share their fits.

    Attributes:
        endpoint: the endpoint a scoring notebook sends to (``None``: none; it reads the
            store only).
        outputs: the report's outputs folder (``<run>/tables`` under it).
        shared_fits: the folder the kernels of this report share their combiner fits in
            (`judgepanel.studies.common.fitcache`; ``None``: none).
        threads: the width of each kernel's OpenMP and BLAS pools
            (`judgepanel.report.kernels`; ``None``: the libraries' default). Not a
            parameter: the kernel starts with it.
        warm: run the notebook in a warm kernel of this process, put back to its fresh
            state after it (`judgepanel.report.warm_kernels`); ``False``: in a kernel
            started for it alone. Not a parameter: the page is the same either way.
    """

    endpoint: Endpoint | None = None
    outputs: Path | None = None
    shared_fits: Path | None = None
    threads: int | None = None
    warm: bool = True

    def parameters(self) -> dict[str, Any]:
        """The papermill parameters of this context: plain values, never a key."""
        return {
            "endpoint": self.endpoint.as_parameter() if self.endpoint else None,
            "outputs": str(self.outputs) if self.outputs else None,
            "shared_fits": str(self.shared_fits) if self.shared_fits else None,
        }

    def hidden(self) -> dict[str, str]:
        """What a page shows instead of this context's passing values (a simulated
        server's port, a temporary folder): the page stays the same from run to run."""
        out = {str(self.shared_fits): "shared-fits"} if self.shared_fits else {}
        if self.endpoint is not None and self.endpoint.provider == SIMULATOR:
            out[str(self.endpoint.base_url)] = "simulated-judge-server"
        return out


def notebook_parameters(
    config: Config,
    run: Run,
    overrides: dict[str, Any] | None = None,
    context: KernelContext | None = None,
) -> dict[str, Any]:
    """What papermill injects into a notebook of ``run``: its name, runs file, overrides,
    and the report's ``context`` (endpoint, outputs, shared fits).

    Everything else (profile, store, datasets, families, the study's parameters) the
    notebook's setup call derives from the runs file (`judgepanel.report.notebook_run`),
    exactly as it does when a person runs the notebook in JupyterLab. The API key is
    deliberately absent: the endpoint names the variable a kernel reads it from.
    """
    return {
        "run": run.name,
        "runs_file": shown_path(config.path),
        "overrides": run_overrides(run, overrides),
        **(context or KernelContext()).parameters(),
    }


def _notebook_path(name: str) -> Path:
    path = project_root() / NOTEBOOK_DIR / f"{name}.ipynb"
    if not path.exists():
        raise FileNotFoundError(f"{path}: notebook listed in the runs file does not exist")
    return path


def _failure_text(exc: BaseException, notebook: Path) -> str:
    """Name the notebook and the failing cell; papermill's error carries the cell index."""
    cell = getattr(exc, "exec_count", None)
    ename = getattr(exc, "ename", type(exc).__name__)
    evalue = getattr(exc, "evalue", str(exc))
    where = f"cell [{cell}]" if cell is not None else "a cell"
    return f"{notebook.name}: {where} raised {ename}: {evalue}"


def execute_notebook(
    config: Config,
    run: Run,
    name: str,
    outputs: Path,
    *,
    timeout: int = 3600,
    overrides: dict[str, Any] | None = None,
    quick: bool = False,
    progress: bool = False,
    render: Callable[..., Path] | None = None,
    context: KernelContext | None = None,
    timings: Timings | None = None,
) -> NotebookResult:
    """Execute one notebook of a run and render it as a report page (also when a cell failed).

    ``context`` says where the notebook sends calls and shares fits; its outputs go under
    ``outputs`` whatever it says.

    ``render`` replaces :func:`render_run_page` (same arguments): the report passes one that
    renders in a worker process, since the HTML export is pure-Python work that would
    otherwise hold this process's interpreter while the other notebooks' kernels report.
    ``timings``: where the report records the notebook's step (its time and outcome).
    """
    import papermill as pm  # heavy (the Jupyter stack): loaded when a notebook runs

    begun = timings.now() if timings is not None else 0.0
    src = _notebook_path(name)
    outputs = Path(outputs).resolve()
    run_dir = outputs / run.name
    run_dir.mkdir(parents=True, exist_ok=True)
    out_nb = run_dir / f"{name}.ipynb"
    # The kernel finds this report's outputs in its parameters (a kernel without them
    # writes under outputs/interactive/); every notebook of one report shares them.
    context = replace(context or KernelContext(), outputs=outputs)
    params = notebook_parameters(config, run, overrides, context)
    started = time.monotonic()
    error = ""
    cpu: float | None = None
    with notebook_kernel(context.threads, str(project_root()), warm=context.warm) as kernel:
        kernel_cpu = process_cpu(kernel.pid)
        try:
            pm.execute_notebook(
                str(src),
                str(out_nb),
                parameters=params,
                kernel_name="python3",
                progress_bar=progress,
                cwd=str(project_root()),
                execution_timeout=timeout,
                **kernel.arguments,
            )
        except Exception as exc:  # papermill raises PapermillExecutionError for a failing cell
            error = _failure_text(exc, src)
            kernel.spoil()
        cpu = cpu_since(kernel.pid, kernel_cpu)
    seconds = time.monotonic() - started
    html_path = None
    if out_nb.exists():
        html_path = (render or render_run_page)(
            config, run, out_nb, overrides=overrides, quick=quick, hidden=context.hidden()
        )
    result = NotebookResult(run.name, name, not error, seconds, html_path, error)
    record_outcome(outputs, result)
    if timings is not None:
        measured = {"cpu_s": cpu} if cpu is not None else {}
        timings.record("notebook", begun, run=run.name, notebook=name, ok=result.ok, **measured)
    return result


def render_run_page(
    config: Config,
    run: Run,
    notebook: Path,
    *,
    overrides: dict[str, Any] | None = None,
    quick: bool = False,
    origin: Path | None = None,
    hidden: dict[str, str] | None = None,
) -> Path:
    """Render an executed notebook of ``run`` with the run's provenance and explorer link.

    ``origin`` is the folder of the runs file the user named, when ``config`` is a copy
    written elsewhere (a quick report's): its paths are shown relative to it. ``hidden``:
    further texts the page shows otherwise (:meth:`KernelContext.hidden`).
    """
    outputs = notebook.parent.parent
    replacements = report_replacements(config, outputs, origin, hidden)
    prov = provenance(config, run, project_root(), overrides=overrides, quick=quick)
    # the record is shown on the index as well as on the page: no machine path in either
    prov = _scrubbed(prov, replacements)
    explorer = outputs / EXPLORER_DIR / f"{run.profile.name}-{run.datasets[0]}.html"
    if len(run.datasets) == 1 and explorer.exists():
        prov["explorer"] = f"../{EXPLORER_DIR}/{explorer.name}"
    write_provenance(notebook.parent, prov)
    return render_page(notebook, prov, replacements)


def _scrubbed(value: Any, replacements: list[tuple[str, str]]) -> Any:
    """``value`` with every string in it rewritten by :func:`scrub_paths`."""
    if isinstance(value, str):
        return scrub_paths(value, replacements)
    if isinstance(value, dict):
        return {k: _scrubbed(v, replacements) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_scrubbed(v, replacements) for v in value)
    return value


def report_replacements(
    config: Config,
    outputs: Path,
    origin: Path | None = None,
    hidden: dict[str, str] | None = None,
) -> list[tuple[str, str]]:
    """The absolute locations a page of this report must not show, and what it shows
    instead; ``hidden`` adds other texts (a server's URL), the longest replaced first."""
    pairs = path_replacements({outputs: "outputs", origin or config.path.parent: "."})
    pairs += list((hidden or {}).items())
    return sorted(pairs, key=lambda kv: len(kv[0]), reverse=True)


def notebook_sends_calls(config: Config, run: Run, name: str, overrides: dict[str, Any]) -> bool:
    """Whether a notebook may send calls: one of `SCORING_NOTEBOOKS`, with ``score`` not off.

    Such a notebook runs or resumes its run's scoring when an endpoint is configured, so
    the notebooks reading the same datasets wait for it.
    """
    if name not in SCORING_NOTEBOOKS:
        return False
    params = resolve_parameters(run, config.parameters, run_overrides(run, overrides))
    return bool(getattr(params, "score", True))


SCORING_NOTEBOOKS = frozenset({"00_scoring"})
"""The notebooks that run or resume their run's scoring (with the ``score`` parameter)."""


QUICK_RESAMPLES = 200
"""Bootstrap resamples of a quick report, unless ``-p n_resamples=...`` says otherwise."""
QUICK_DESIGN = {"holistic_k": 5, "dimension_r": 2}
"""A quick report's repetitions: at most these many per image, family and prompt. Its calls
are the first repetitions of the full design's, so a later full report reuses them."""
QUICK_PARAMETERS = {
    "n_partitions": 5,
    "ceiling_splits": 50,
    "headroom_resamples": 500,
    "savings_images": 10,
}
"""A quick report's lighter checks: 04's fold partitions, split-half ceilings and headroom
bootstrap, and 00's savings sample (global parameters: each run's study takes those its
model knows)."""
QUICK_RUNS_FILE = "quick-runs.yaml"


def _absolute_raw(config: Config) -> dict[str, Any]:
    """The runs file as parsed, with its paths made absolute (for a copy written elsewhere)."""
    raw = copy.deepcopy(config.raw)  # the file as parsed once, not read again
    base = config.path.resolve().parent

    def absolute(p: str) -> str:
        q = Path(p)
        return str(q if q.is_absolute() else base / q)

    for prof in (raw.get("profiles") or {}).values():
        for key in ("store", "rubric"):
            if prof.get(key):
                prof[key] = absolute(prof[key])
        for ds in (prof.get("datasets") or {}).values():
            for key in ("root", "questions", "eligible"):
                if ds.get(key):
                    ds[key] = absolute(ds[key])
    for run in (raw.get("runs") or {}).values():
        if run.get("rubric"):
            run["rubric"] = absolute(run["rubric"])
    return raw


def _write_runs_file(
    raw: dict[str, Any], path: Path, rubric: Path | None, missing_images: str | None = None
) -> Path:
    if rubric is not None:  # ``--rubric`` wins over every run's and profile's own
        for run in (raw.get("runs") or {}).values():
            run["rubric"] = str(Path(rubric).resolve())
    if missing_images is not None:  # ``--missing-images`` wins over every dataset entry's
        for prof in (raw.get("profiles") or {}).values():
            for ds in (prof.get("datasets") or {}).values():
                if takes_missing_images(ds["kind"]):
                    ds[MISSING_IMAGES] = missing_images
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    return path


def quick_runs_file(
    config: Config,
    outputs: Path,
    rubric: Path | None = None,
    missing_images: str | None = None,
) -> Path:
    """The runs file of a quick report: the same profiles and runs, fewer repetitions.

    Written under ``outputs``; its paths are made absolute so they still name the files the
    original runs file names (pages show them relative to the project, as always).
    ``rubric`` (``--rubric``) replaces every run's rubric, ``missing_images``
    (``--missing-images``) every rated dataset entry's policy.
    """
    raw = _absolute_raw(config)
    for design in (raw.get("scoring") or {}).values():
        for key, cap in QUICK_DESIGN.items():
            if key in design:
                design[key] = min(int(design[key]), cap)
    raw["parameters"] = {**(raw.get("parameters") or {}), **QUICK_PARAMETERS}
    for run in (raw.get("runs") or {}).values():  # a run's own value may not undo the cap
        params = run.get("parameters") or {}
        for key, cap in QUICK_PARAMETERS.items():
            if key in params:
                params[key] = min(int(params[key]), cap)
    return _write_runs_file(raw, outputs / QUICK_RUNS_FILE, rubric, missing_images)


RUBRIC_RUNS_FILE = "rubric-runs.yaml"


def rubric_runs_file(
    config: Config, outputs: Path, rubric: Path | None, missing_images: str | None = None
) -> Path:
    """A copy of the runs file whose every run names ``rubric`` (``report --rubric``) and
    whose every rated dataset entry says ``missing_images`` (``--missing-images``): the
    scoring and the notebooks all read them from the runs file they are given."""
    raw = _absolute_raw(config)
    return _write_runs_file(raw, outputs / RUBRIC_RUNS_FILE, rubric, missing_images)


def derived_request(named: Config, request: ReportRequest) -> ReportRequest:
    """``request`` reading the runs file its flags derive from ``named`` (``--quick``,
    ``--rubric``, ``--missing-images``), written under its outputs, with a quick report's
    resamples; ``request`` itself when no flag changes the design."""
    outputs = Path(request.outputs)
    if request.quick:
        written = quick_runs_file(named, outputs, request.rubric, request.missing_images)
        overrides = {"n_resamples": QUICK_RESAMPLES, **request.overrides}
        return replace(request, runs_file=written, overrides=overrides)
    if request.rubric is not None or request.missing_images is not None:
        written = rubric_runs_file(named, outputs, request.rubric, request.missing_images)
        return replace(request, runs_file=written)
    return request


def select_notebooks(config: Config, request: ReportRequest) -> list[tuple[Run, list[str]]]:
    """The runs and notebooks a request selects; a selection that cannot run is an error."""
    try:
        profile_runs = config.runs_of(request.profile)
        runs = [config.run(name) for name in request.runs] if request.runs else profile_runs
    except ConfigError as exc:
        raise ReportError(str(exc)) from None
    for run in runs:
        if run.profile.name != request.profile:
            mine = ", ".join(r.name for r in profile_runs) or "none"
            raise ReportError(
                f"run {run.name!r} belongs to profile {run.profile.name!r}, not "
                f"{request.profile!r}; pass --profile {run.profile.name} or one of the runs "
                f"of {request.profile!r}: {mine}"
            )
    chosen = [
        (run, [n for n in run.notebooks if not request.only or n.startswith(request.only)])
        for run in runs
    ]
    if not any(names for _, names in chosen):
        offered = sorted({n for run in runs for n in run.notebooks})
        raise ReportError(
            f"--only {','.join(request.only)} matches no notebook of the selected runs; "
            f"their notebooks are: {', '.join(offered)}"
        )
    try:
        known = {k for run in runs for k in parameter_model(run).model_fields}
        unknown = sorted(set(request.overrides) - known)
        if unknown:
            raise ReportError(
                f"-p {unknown[0]}: not a parameter of the selected runs' studies; "
                f"parameters are: {', '.join(sorted(known))}"
            )
        for run in runs:  # types and the runs' own keys, before anything runs
            resolve_parameters(run, config.parameters, run_overrides(run, request.overrides))
    except ConfigError as exc:
        raise ReportError(str(exc)) from None
    return [(run, names) for run, names in chosen if names]


def summary_text(
    results: list[NotebookResult], seconds: float, outputs: Path, index: Path | None
) -> str:
    """The end of a report: notebooks ok and failed, time, headline numbers, the index URL
    (the outputs folder for a report without pages)."""
    ok = sum(r.ok for r in results)
    lines = [
        "",
        f"report: {ok} notebooks ok, {len(results) - ok} failed, {seconds / 60:.1f} min in all",
    ]
    for run, text in headline_lines(outputs, results):
        lines.append(f"  {run}: {text}")
    if index is None:
        lines.append(f"tables in {outputs.resolve()} (no pages rendered)")
    else:
        lines.append(f"open {index.resolve().as_uri()}")
    return "\n".join(lines)
