"""Execute the notebooks of a profile with papermill and render them to HTML.

For each run of ``papermill_runs.yaml`` this writes ``outputs/<run>/<NN_name>.ipynb`` and
``.html`` (code visible, figures inline), the tables each notebook shows under
``outputs/<run>/tables/``, each notebook's outcome in ``outputs/<run>/notebooks.json``, and
finally ``outputs/index.html``, which links every executed notebook with its headline
numbers. A failing cell makes the command exit non-zero, naming the notebook and the cell.
"""

from __future__ import annotations

import html
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judgepanel.config import Config, Run, load_config, project_root

NOTEBOOK_DIR = "notebooks"
OUTCOMES_FILE = "notebooks.json"


@dataclass(frozen=True)
class NotebookResult:
    """One executed notebook."""

    run: str
    notebook: str
    ok: bool
    seconds: float
    html: Path | None
    error: str = ""


def notebook_parameters(config: Config, run: Run, outputs: Path) -> dict[str, Any]:
    """What papermill injects into every notebook of ``run``: paths, families, protocol.

    The API key and the endpoint are deliberately absent; the scoring notebook reads the
    endpoint from the environment like every other client.
    """
    profile = run.profile
    run_dir = outputs / run.name
    datasets = {
        name: {"kind": profile.dataset(name).kind, "root": str(profile.dataset(name).root)}
        for name in run.datasets
    }
    params: dict[str, Any] = {
        "run": run.name,
        "profile": profile.name,
        "runs_file": str(config.path),
        "store": str(profile.store),
        "families": dict(profile.families),
        "predeclared": list(profile.predeclared),
        "simulated": profile.simulated,
        "tables_dir": str(run_dir / "tables"),
        "datasets": datasets,
    }
    if len(run.datasets) == 1:
        ref = profile.dataset(run.dataset)
        params.update(dataset=ref.name, dataset_kind=ref.kind, dataset_root=str(ref.root))
    params.update(run.parameters)
    return params


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
    config: Config, run: Run, name: str, outputs: Path, *, timeout: int = 3600
) -> NotebookResult:
    """Execute one notebook of a run and export it to HTML (also when a cell failed)."""
    import papermill as pm

    src = _notebook_path(name)
    run_dir = outputs / run.name
    run_dir.mkdir(parents=True, exist_ok=True)
    out_nb = run_dir / f"{name}.ipynb"
    declared = pm.inspect_notebook(str(src))
    # Inject only what the notebook declares, so one runs file can serve every notebook.
    params = {k: v for k, v in notebook_parameters(config, run, outputs).items() if k in declared}
    started = time.monotonic()
    error = ""
    try:
        pm.execute_notebook(
            str(src),
            str(out_nb),
            parameters=params,
            kernel_name="python3",
            progress_bar=False,
            cwd=str(project_root()),
            execution_timeout=timeout,
        )
    except Exception as exc:  # papermill raises PapermillExecutionError for a failing cell
        error = _failure_text(exc, src)
    seconds = time.monotonic() - started
    html_path = export_html(out_nb) if out_nb.exists() else None
    result = NotebookResult(run.name, name, not error, seconds, html_path, error)
    _remember(outputs, result)
    return result


def _outcomes_path(outputs: Path, run: str) -> Path:
    return outputs / run / OUTCOMES_FILE


def _remember(outputs: Path, result: NotebookResult) -> None:
    """Record a notebook's outcome beside it, so a later index still lists it."""
    path = _outcomes_path(outputs, result.run)
    known = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    known[result.notebook] = {"ok": result.ok, "seconds": result.seconds, "error": result.error}
    path.write_text(json.dumps(known, indent=2, sort_keys=True), encoding="utf-8")


def _remembered(outputs: Path, run: str) -> dict[str, NotebookResult]:
    """The outcomes recorded under ``outputs/<run>/`` by earlier executions."""
    path = _outcomes_path(outputs, run)
    if not path.exists():
        return {}
    found = {}
    for name, o in json.loads(path.read_text(encoding="utf-8")).items():
        html_path = outputs / run / f"{name}.html"
        found[name] = NotebookResult(
            run,
            name,
            bool(o["ok"]),
            float(o["seconds"]),
            html_path if html_path.exists() else None,
            str(o.get("error", "")),
        )
    return found


def export_html(notebook: Path) -> Path:
    """Render an executed notebook to HTML with code visible and figures inline."""
    import nbformat
    from nbconvert import HTMLExporter

    nb = nbformat.read(notebook, as_version=4)
    body, _ = HTMLExporter(template_name="lab").from_notebook_node(nb)
    out = notebook.with_suffix(".html")
    out.write_text(body, encoding="utf-8")
    return out


def write_index(outputs: Path, results: list[NotebookResult], config: Config) -> Path:
    """``outputs/index.html``: every executed notebook with its headline numbers.

    ``results`` are this command's executions; notebooks of the runs file executed by an
    earlier command (their outcome is recorded in ``outputs/<run>/notebooks.json``) are
    listed too, so re-running one analysis does not drop the others from the index.
    """
    fresh = {(r.run, r.notebook): r for r in results}
    by_run: dict[str, list[NotebookResult]] = {}
    for run in config.runs.values():
        earlier = _remembered(outputs, run.name)
        for name in run.notebooks:
            r = fresh.get((run.name, name)) or earlier.get(name)
            if r is not None:
                by_run.setdefault(run.name, []).append(r)
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>judgepanel report</title>",
        "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto;line-height:1.45}"
        "td,th{padding:.25em .6em;text-align:left;vertical-align:top}"
        ".fail{color:#b91c1c}.sim{border:2px solid #b45309;background:#fffbeb;padding:.6em}"
        "</style></head><body><h1>judgepanel report</h1>",
    ]
    simulated = {config.run(r).profile.simulated for r in by_run}
    if True in simulated:
        parts.append(
            "<p class='sim'><b>Simulated data.</b> Runs of a simulated profile use the "
            "project's synthetic world and simulated judges; their numbers exercise the "
            "method and are not claims about real models or datasets.</p>"
        )
    for run_name, items in by_run.items():
        run = config.run(run_name)
        parts.append(f"<h2>{html.escape(run_name)}</h2>")
        parts.append(f"<p>{html.escape(run.profile.description)}</p><table>")
        heads_path = outputs / run_name / "headlines.json"
        heads = json.loads(heads_path.read_text()) if heads_path.exists() else {}
        for r in items:
            link = (
                f"<a href='{html.escape(run_name)}/{html.escape(r.html.name)}'>"
                f"{html.escape(r.notebook)}</a>"
                if r.html
                else html.escape(r.notebook)
            )
            status = (
                f"<span class='fail'>failed: {html.escape(r.error)}</span>"
                if not r.ok
                else f"{r.seconds:.0f} s"
            )
            lines = [f"{html.escape(str(h['text']))}" for h in heads.get(r.notebook, {}).values()]
            parts.append(f"<tr><td>{link}</td><td>{status}</td><td>{'<br>'.join(lines)}</td></tr>")
        parts.append("</table>")
    parts.append("</body></html>")
    index = outputs / "index.html"
    index.write_text("\n".join(parts), encoding="utf-8")
    return index


def _score_runs(config: Config, runs: list[Run]) -> None:
    """Score each dataset of the selected runs once, before any notebook reads the store.

    A profile's ``max_cost`` is one ceiling for all the scoring of this command, as it is
    for one ``judgepanel score``: each run gets what the runs before it left.
    """
    from judgepanel.scoring import score_run

    seen: set[tuple[str, str]] = set()
    spent: dict[str, float] = {}
    for run in runs:
        if len(run.datasets) != 1:
            continue  # runs over several datasets only read what their own runs scored
        profile = run.profile
        key = (profile.name, run.dataset)
        if key in seen:
            continue
        seen.add(key)
        remaining = None
        if profile.max_cost > 0:
            remaining = max(0.0, profile.max_cost - spent.get(profile.name, 0.0))
        print(f"scoring {run.name} ({run.dataset})", flush=True)
        summary = score_run(run.name, runs_file=config.path, max_cost=remaining)
        spent[profile.name] = spent.get(profile.name, 0.0) + summary.spend
        if summary.aborted:
            raise SystemExit(f"{run.name}: scoring was aborted: {summary.aborted}")
        if summary.stopped_by_budget:
            raise SystemExit(
                f"{run.name}: the budget of profile {profile.name!r} "
                f"(${profile.max_cost:.2f}) stopped scoring; see `judgepanel status`"
            )


def report_command(args: Any) -> int:
    """``judgepanel report``: optionally start the simulator and score, then execute."""
    config = load_config(args.runs_file)
    runs = config.runs_of(args.profile)
    if args.run:
        runs = [config.run(name) for name in args.run]
    only = [p.strip() for p in args.only.split(",")] if args.only else None
    outputs = Path(args.outputs).resolve()
    outputs.mkdir(parents=True, exist_ok=True)

    server = None
    saved_env = {k: os.environ.get(k) for k in ("OPENAI_BASE_URL", "OPENAI_API_KEY")}
    try:
        if args.start_sim:
            from judgepanel.launcher import start_sim_server

            server = start_sim_server()
            os.environ["OPENAI_BASE_URL"] = server.base_url
            # The simulator accepts any bearer token: a real key in the environment is
            # replaced (and restored below), so it is not sent to it or to the kernels.
            os.environ["OPENAI_API_KEY"] = "sim-local"
            print(f"simulated judge server listening at {server.base_url}", flush=True)
        if args.score:
            _score_runs(config, runs)
        results: list[NotebookResult] = []
        for run in runs:
            for name in run.notebooks:
                if only and not any(name.startswith(p) for p in only):
                    continue
                print(f"executing {run.name}/{name}", flush=True)
                res = execute_notebook(config, run, name, outputs)
                results.append(res)
                state = "ok" if res.ok else f"FAILED: {res.error}"
                print(f"  {res.seconds:6.1f} s  {state}", flush=True)
        index = write_index(outputs, results, config)
        print(f"wrote {index}")
    finally:
        if server is not None:
            server.stop()
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    failures = [r for r in results if not r.ok]
    for r in failures:
        print(f"error: {r.run}/{r.error}", file=sys.stderr)
    return 1 if failures else 0
