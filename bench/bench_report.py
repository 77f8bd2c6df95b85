"""Where `make report` spends its time, step by step, on a fresh clone of the checkout.

The commit is cloned into a temporary folder (no data, no store, no outputs) and
`make report` runs there with this checkout's environment, brought up to date first, so
installing is not timed and the copy never reinstalls the package; the clone's own `lib/`
comes first on the path, so its code is what runs. The data steps run through the
Makefile, the worlds and then the comparator imports (each as `make data` runs it);
then `make report` runs and its own record, `outputs/_timings.json`, gives each scoring
step (seconds, calls sent), each call explorer and each notebook (start, end, seconds).

Writes the breakdown to `bench/results/report.json` (`report-quick.json` with --quick)
and prints one JSON line last. The target: the whole report in at most 10 minutes on 2
cores (3 minutes with --quick).

``--against REV`` measures that commit first and then ``--commit``, one after the other in
this run on this machine, and prints both breakdowns side by side with the ratio of their
times (batch mode's target: at most 0.6 of the report before it).
``--same-runs`` (with ``--against``) times ``--commit`` on the earlier commit's runs and
data: its runs file is the commit's own with the ``runs`` section of the earlier one, and
its worlds and comparator imports are the earlier commit's defaults, so the two reports
do the same work and the ratio measures the code, not the runs added since.
``--pairs N`` (with ``--against``) measures the two commits N times, alternating, and
gives each pair's ratio and their median: on a shared machine one pair's ratio can be off
by a fifth either way.
``--keep-outputs DIR`` keeps the measured commit's outputs (to record a reference).

``--timings FILE`` runs nothing: it reads a report's ``outputs/_timings.json`` (of a fresh
`make report`, say) and prints one table of every step, by start time, with its start, end
and seconds, and for each scoring run the calls it sent and the seconds per call of its
lane (wall; CPU too where the step records ``cpu_s``), so that a step that has become
slower, or a scoring run whose calls cost more than the others', shows at a glance.

Usage: python bench/bench_report.py [--quick] [--jobs N] [--commit REV] [--before FILE]
       [--against REV [--same-runs] [--pairs N]] [--keep-outputs DIR]
       python bench/bench_report.py --timings outputs/_timings.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
TARGET_S = {False: 600.0, True: 180.0}


def git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(
        ["git", "-C", str(cwd), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def make_default(makefile: str, name: str) -> str:
    """The default a Makefile gives ``name`` (``NAME ?= value``): the commit's own worlds
    and comparator imports, so each commit's report has the data its runs read."""
    match = re.search(rf"^{name} \?= *(.*)$", makefile, flags=re.MULTILINE)
    if match is None:
        raise ValueError(f"the Makefile sets no default for {name}")
    return match.group(1).strip()


BENCH_RUNS = "bench_runs.yaml"


def same_runs_file(work: Path, earlier: str) -> Path:
    """A runs file for the clone in ``work``: its own, with the ``runs`` of ``earlier``.

    Profiles, scoring designs and prices stay the clone's own (the code reads them); the
    runs, their datasets, notebooks and parameters become the earlier commit's.
    """
    import yaml

    own = yaml.safe_load((work / "papermill_runs.yaml").read_text(encoding="utf-8"))
    theirs = yaml.safe_load(git("show", f"{earlier}:papermill_runs.yaml"))
    own["runs"] = theirs["runs"]
    path = work / BENCH_RUNS
    path.write_text(yaml.safe_dump(own, sort_keys=False), encoding="utf-8")
    return path


def clone(commit: str, dest: Path) -> None:
    """A fresh clone of ``commit``, as someone would start from it."""
    subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(ROOT), str(dest)], check=True)
    git("checkout", "--quiet", commit, cwd=dest)


class Steps:
    """Runs make targets in the clone and records how long each took."""

    def __init__(self, work: Path, make_vars: list[str]) -> None:
        self.work = work
        self.make_vars = make_vars
        venv = ROOT / ".venv"
        # The clone's packages shadow the environment's editable install of this checkout.
        path = os.pathsep.join(filter(None, [str(work / "lib"), os.environ.get("PYTHONPATH")]))
        self.env = {**os.environ, "JUDGEPANEL_ROOT": str(work), "PYTHONPATH": path}
        self.env.pop("OPENAI_BASE_URL", None)
        self.stamp = str(venv / ".installed")
        self.shared = [f"VENV={venv}", f"STAMP={self.stamp}"]
        self.phases: list[dict[str, Any]] = []

    def make(self, phase: str, name: str, target: str, *extra: str) -> bool:
        """Run ``make target`` with the bench's variables; whether it succeeded.

        ``-o STAMP``: the clone's pyproject.toml is as new as the clone, and make must not
        take that for a change of the pins and reinstall the shared environment from a
        folder deleted minutes later.
        """
        started = time.monotonic()
        proc = subprocess.run(
            ["make", "-o", self.stamp, target, *self.shared, *self.make_vars, *extra],
            cwd=self.work,
            env=self.env,
            capture_output=True,
            text=True,
        )
        seconds = time.monotonic() - started
        if proc.returncode != 0:
            sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-4000:])
        self.phases.append({"phase": phase, "name": name, "seconds": round(seconds, 1)})
        return proc.returncode == 0


def report_steps(outputs: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The report's own record of its steps, as phases of this benchmark."""
    path = outputs / "_timings.json"
    if not path.exists():  # a commit before the record existed: the notebooks' own seconds
        phases = []
        for record in sorted(outputs.glob("*/notebooks.json")):
            for name, o in json.loads(record.read_text()).items():
                phases.append(
                    {"phase": "notebook", "name": f"{record.parent.name}/{name}",
                     "seconds": round(o["seconds"], 1)}
                )  # fmt: skip
        return phases, {}
    timings = json.loads(path.read_text())
    phases = []
    for step in timings["steps"]:
        name = {
            "scoring": step.get("run"),
            "explorer": step.get("dataset"),
            "notebook": f"{step.get('run')}/{step.get('notebook')}",
        }.get(step["phase"], step["phase"])
        phase = {"phase": step["phase"], "name": name, "seconds": round(step["seconds"], 1)}
        phase.update(start=round(step["start"], 1), end=round(step["end"], 1))
        if "calls" in step:
            phase["calls"] = step["calls"]
        phases.append(phase)
    return phases, timings


def measure(
    commit: str,
    quick: bool,
    jobs: int | None,
    keep: Path | None = None,
    runs_of: str | None = None,
) -> dict[str, Any]:
    """Clone ``commit`` and time every step of its `make report` (``keep``: copy its
    outputs there; ``runs_of``: the commit whose runs and data it does instead of its own)."""
    make_vars = (["QUICK=1"] if quick else []) + ([f"JOBS={jobs}"] if jobs else [])
    with tempfile.TemporaryDirectory(prefix="report-bench-") as tmp:
        work = Path(tmp) / "checkout"
        clone(commit, work)
        steps = Steps(work, make_vars)
        makefile = (work / "Makefile").read_text()
        stepwise = "WORLDS ?=" in makefile
        started = time.monotonic()
        if runs_of is not None and "RUNS_FILE ?=" not in makefile:
            raise SystemExit(f"--same-runs: the Makefile of {commit[:7]} takes no RUNS_FILE")
        if stepwise:
            # the worlds, then the comparator imports, each as `make data` runs it (side by
            # side where the Makefile does so)
            data_makefile = makefile if runs_of is None else git("show", f"{runs_of}:Makefile")
            worlds = make_default(data_makefile, "WORLDS")
            comparators = make_default(data_makefile, "COMPARATORS")
            report_vars = ["WORLDS=", "COMPARATORS="]
            if runs_of is not None:
                report_vars.append(f"RUNS_FILE={same_runs_file(work, runs_of).name}")
            plan = [
                ("data", "worlds", [f"WORLDS={worlds}", "COMPARATORS="]),
                ("data", "comparators", ["WORLDS=", f"COMPARATORS={comparators}"]),
                ("report", "make report", report_vars),
            ]
        else:  # an older Makefile: its data steps cannot be run one by one
            plan = [("report", "make report (with data)", [])]
        # a phase is its make target; all() stops at the first step that fails
        ok = all(steps.make(phase, name, phase, *extra) for phase, name, extra in plan)
        total = time.monotonic() - started
        inner, timings = report_steps(work / "outputs")
        if keep is not None:
            import shutil

            shutil.rmtree(keep, ignore_errors=True)
            shutil.copytree(work / "outputs", keep)
    phases = steps.phases + inner
    by = {k: sum(p["seconds"] for p in phases if p["phase"] == k) for k in ("data", "scoring")}
    notebooks = [p for p in inner if p["phase"] == "notebook"]
    return {
        "commit": git("rev-parse", "--short", commit),
        "runs_of": git("rev-parse", "--short", runs_of) if runs_of else None,
        "quick": quick,
        "jobs": timings.get("jobs"),
        "seconds": round(total, 1),
        "data_s": round(by["data"], 1),
        "scoring_s": round(by["scoring"], 1),
        "scoring_span_s": span([p for p in inner if p["phase"] == "scoring"]),
        "scoring_calls": sum(p.get("calls", 0) for p in inner),
        "report_s": sum(p["seconds"] for p in phases if p["phase"] == "report"),
        "notebooks_sum_s": round(sum(p["seconds"] for p in notebooks), 1),
        "notebooks_span_s": span(notebooks),
        "ok": ok,
        "phases": phases,
    }


def span(steps: list[dict[str, Any]]) -> float | None:
    """Seconds from the first step's start to the last one's end (None without times)."""
    if not steps or "start" not in steps[0]:
        return None
    return round(max(p["end"] for p in steps) - min(p["start"] for p in steps), 1)


def comparison(before: dict[str, Any], after: dict[str, Any]) -> str:
    """A before/after table: every phase of either run, then the totals."""

    def key(p: dict[str, Any]) -> tuple[str, str]:
        return p["phase"], p["name"]

    old = {key(p): p["seconds"] for p in before["phases"]}
    new = {key(p): p["seconds"] for p in after["phases"]}
    rows = [(f"{k[0]} {k[1]}", old.get(k), new.get(k)) for k in dict.fromkeys([*old, *new])]
    totals = ("data_s", "scoring_s", "scoring_span_s", "notebooks_sum_s", "notebooks_span_s")
    for total in (*totals, "seconds"):
        rows.append((f"total {total}", before.get(total), after.get(total)))
    width = max(len(r[0]) for r in rows)
    lines = [f"{'step':<{width}}  {'before':>8}  {'after':>8}  {'change':>8}"]
    for name, b, a in rows:
        change = f"{a - b:+8.1f}" if a is not None and b is not None else f"{'':>8}"
        fmt = [f"{v:8.1f}" if v is not None else f"{'-':>8}" for v in (b, a)]
        lines.append(f"{name:<{width}}  {fmt[0]}  {fmt[1]}  {change}")
    return "\n".join(lines)


class TimingsError(ValueError):
    """A timings file that cannot be read; the message names the file and the step."""


def _number(step: dict[str, Any], field: str, where: str, default: float | None = None) -> float:
    value = step.get(field, default)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TimingsError(f"{where}: {field!r} must be a number, got {value!r}")
    return float(value)


def step_name(step: dict[str, Any]) -> str:
    """What a step is: the run scored, the dataset explored, the run's notebook, or the
    phase itself (the simulator, the index)."""
    phase = step.get("phase")
    if phase == "scoring":
        return str(step.get("run"))
    if phase == "explorer":
        return f"{step.get('profile')}/{step.get('dataset')}"
    if phase == "notebook":
        return f"{step.get('run')}/{step.get('notebook')}"
    return str(phase)


def timing_rows(timings: dict[str, Any], source: str = "timings") -> list[dict[str, Any]]:
    """One row a step of a report's ``_timings.json`` (as the report writes it), by start.

    Every step gets ``cpu_s`` where it records it (a scoring run's client and simulated
    server, a notebook's warm kernel; else None). A scoring step gets ``calls`` (sent),
    ``wall_ms_per_call`` (its lane's seconds over them) and, where it records ``cpu_s``,
    ``cpu_ms_per_call``.

    Raises:
        TimingsError: no ``steps`` list, or a step without its phase or times.
    """
    steps = timings.get("steps") if isinstance(timings, dict) else None
    if not isinstance(steps, list):
        raise TimingsError(f"{source}: no 'steps' list (is it a report's _timings.json?)")
    rows = []
    for i, step in enumerate(steps):
        where = f"{source}: step {i + 1}"
        if not isinstance(step, dict) or not isinstance(step.get("phase"), str):
            raise TimingsError(f"{where}: a step needs a 'phase'")
        row: dict[str, Any] = {
            "phase": step["phase"],
            "name": step_name(step),
            "start": _number(step, "start", where),
            "end": _number(step, "end", where),
            "seconds": _number(step, "seconds", where),
            "cpu_s": _number(step, "cpu_s", where) if "cpu_s" in step else None,
        }
        if step["phase"] == "scoring":
            calls = int(_number(step, "calls", where, 0))
            row["calls"] = calls
            row["wall_ms_per_call"] = 1000 * row["seconds"] / calls if calls else None
            cpu = step.get("cpu_s")
            row["cpu_ms_per_call"] = (
                1000 * _number(step, "cpu_s", where) / calls if calls and cpu is not None else None
            )
        rows.append(row)
    return sorted(rows, key=lambda r: (r["start"], r["end"]))


def timing_table(rows: list[dict[str, Any]], total: float | None = None) -> str:
    """The rows of :func:`timing_rows` as a fixed-width table (``-`` where a column does
    not apply), the command's total last."""

    def ms(value: float | None) -> str:
        return f"{value:9.3f}" if value is not None else f"{'-':>9}"

    width = max([len("step"), *(len(f"{r['phase']} {r['name']}") for r in rows)])
    head = (
        f"{'step':<{width}}  {'start':>7}  {'end':>7}  {'seconds':>8}  {'cpu s':>7}  {'calls':>7}  "
        f"{'wall ms/call':>12}  {'cpu ms/call':>11}"
    )
    lines = [head]
    for r in rows:
        calls = f"{r['calls']:>7}" if "calls" in r else f"{'-':>7}"
        cpu = f"{r['cpu_s']:7.1f}" if r.get("cpu_s") is not None else f"{'-':>7}"
        lines.append(
            f"{r['phase'] + ' ' + r['name']:<{width}}  {r['start']:7.1f}  {r['end']:7.1f}  "
            f"{r['seconds']:8.1f}  {cpu}  {calls}  {ms(r.get('wall_ms_per_call')):>12}  "
            f"{ms(r.get('cpu_ms_per_call')):>11}"
        )
    if total is not None:
        lines.append(f"{'total':<{width}}  {'':>7}  {'':>7}  {total:8.1f}")
    return "\n".join(lines)


def print_timings(path: Path) -> int:
    """Print the table of a report's timings file (``--timings``)."""
    try:
        timings = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SystemExit(f"{path}: cannot read it ({exc.strerror})") from None
    except ValueError as exc:
        raise SystemExit(f"{path}: not a JSON file ({exc})") from None
    try:
        rows = timing_rows(timings, str(path))
    except TimingsError as exc:
        raise SystemExit(str(exc)) from None
    total = timings.get("seconds")
    print(timing_table(rows, float(total) if isinstance(total, int | float) else None))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        default=os.environ.get("QUICK") == "1",
        help="time `make report QUICK=1` (also when QUICK=1 is in the environment)",
    )
    parser.add_argument("--jobs", type=int, help="JOBS for make report (default: its own)")
    parser.add_argument("--commit", default="HEAD", help="the commit to clone (default: HEAD)")
    parser.add_argument("--before", type=Path, help="an earlier report.json to compare with")
    parser.add_argument("--out", type=Path, help="where to write the breakdown")
    parser.add_argument(
        "--against", help="measure this commit first, in the same run, and compare (ratio)"
    )
    parser.add_argument(
        "--same-runs",
        action="store_true",
        help="time --commit on the runs and data of --against (the same work)",
    )
    parser.add_argument(
        "--pairs", type=int, default=1, help="with --against: measure both commits N times"
    )
    parser.add_argument("--keep-outputs", type=Path, help="keep the measured report's outputs")
    parser.add_argument(
        "--timings", type=Path, help="print the table of a report's _timings.json; run nothing"
    )
    args = parser.parse_args()
    if args.timings is not None:
        return print_timings(args.timings)
    if args.same_runs and not args.against:
        parser.error("--same-runs needs --against REV")
    if args.pairs < 1 or (args.pairs > 1 and not args.against):
        parser.error("--pairs N needs N >= 1 and --against REV")
    before = json.loads(args.before.read_text()) if args.before else None

    # Bring the shared environment up to date here first: if the clone's `make` found the
    # stamp older than pyproject.toml, it would reinstall the package from the temporary
    # clone, and the environment would point at a folder deleted minutes later.
    subprocess.run(["make", "setup"], cwd=ROOT, check=True, capture_output=True)
    runs_of = git("rev-parse", args.against) if args.same_runs else None
    pairs: list[dict[str, Any]] = []
    for i in range(args.pairs):
        if args.against:
            before = measure(git("rev-parse", args.against), args.quick, args.jobs)
        result = measure(
            git("rev-parse", args.commit), args.quick, args.jobs, args.keep_outputs, runs_of
        )
        if before is not None and before.get("seconds"):
            pairs.append(
                {
                    "before_s": before["seconds"],
                    "after_s": result["seconds"],
                    "ratio": round(result["seconds"] / before["seconds"], 3),
                }
            )
            if args.pairs > 1:
                print(f"pair {i + 1}/{args.pairs}: {json.dumps(pairs[-1])}", flush=True)
    out = args.out or RESULTS / ("report-quick.json" if args.quick else "report.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    if before is not None:
        print(comparison(before, result))
        if before.get("seconds"):
            result["before"] = {k: v for k, v in before.items() if k != "phases"}
            result["ratio"] = round(result["seconds"] / before["seconds"], 3)
            if len(pairs) > 1:
                result["pairs"] = pairs
                result["ratio_median"] = round(statistics.median(p["ratio"] for p in pairs), 3)
            out.write_text(json.dumps(result, indent=2) + "\n")
            print(
                f"{result['commit']} took {result['seconds']:.0f} s, {before['commit']} "
                f"{before['seconds']:.0f} s: ratio {result['ratio']:.3f}"
                + (
                    f"; median of {len(pairs)} pairs {result['ratio_median']:.3f}"
                    if len(pairs) > 1
                    else ""
                )
            )
    target = TARGET_S[args.quick]
    summary = {k: v for k, v in result.items() if k not in ("phases", "before")}
    summary.update(
        bench="report",
        minutes=round(result["seconds"] / 60, 2),
        target_seconds=target,
        met=result["ok"] and result["seconds"] <= target,
    )
    print(json.dumps(summary))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
