"""``make interop``: the official harnesses, run against the simulator and synthetic world.

Optional and not part of CI: it needs copies of the harnesses' code that a user placed in
one folder (``INTEROP_DIR``); it fetches nothing. It finds there

- VAB's harness (a folder with ``eval.py`` and ``summarize.py``): run as documented,
  ``eval.py --model openai/<model> --api-base ... --api-key ...`` then ``summarize.py``,
  from a working folder where ``BakeLab/Visual-Aesthetic-Benchmark/data/`` holds the
  synthetic Parquet, so that its ``load_dataset`` reads it offline;
- VisionQ's harness (a folder with ``benchmark/bench_run.py``): run as documented,
  ``bench_run.py --provider openrouter --model <model> --composite --tag-quality`` with
  ``VISIONQ_DATA`` the synthetic root and ``--questions`` / ``--data-points`` its files,
  then ``bench_score.py --slice eligible``. Its client has OpenRouter's URL written into
  it, so a two-line shim sets that one constant to the simulator's URL before running the
  unchanged script; the per-image mode (no ``--composite``) is run on a sample too.

Each step's outputs are then read by ``judgepanel import`` and our metrics. The harnesses
run under ``--python`` (a Python with their requirements: litellm, datasets,
python-dotenv, Pillow, httpx). A table is printed at the end; the exit code is 1 when a
harness step failed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from judgepanel.core.local_sim import SimConfig, start_sim_server
from judgepanel.studies import vab, visionq

MODELS = ("sim-aurora-v1", "sim-basalt-v1")
VAB_REPO = Path("BakeLab") / "Visual-Aesthetic-Benchmark"
SHIM = (
    "import os, runpy, sys\n"
    "sys.path.insert(0, os.getcwd())\n"
    "import lib.openrouter_vlm as client\n"
    "client.OPENROUTER_BASE = os.environ['OPENAI_BASE_URL']\n"
    "sys.argv = ['bench_run.py', *sys.argv[1:]]\n"
    "runpy.run_path('bench_run.py', run_name='__main__')\n"
)


@dataclass
class Row:
    """One line of the printed table."""

    harness: str
    step: str
    ok: bool
    result: str


def _find(root: Path, *names: str) -> Path | None:
    """The first folder under ``root`` (depth 3) holding every file of ``names``."""
    for folder in [root, *sorted(p for p in root.glob("*/") if p.is_dir())]:
        for cand in [folder, *sorted(folder.glob("*/"))]:
            if all((cand / n).is_file() for n in names):
                return cand
    return None


def _run(cmd: list[str], cwd: Path, env: dict[str, str], log: Path) -> tuple[bool, str]:
    """Run a command, its output to ``log``; (exit code 0, combined output)."""
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    out = proc.stdout + proc.stderr
    log.write_text(f"$ {' '.join(cmd)}\n{out}", encoding="utf-8")
    return proc.returncode == 0, out


def _env(base_url: str, key: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OPENROUTER_"))}
    env.update(
        OPENAI_BASE_URL=base_url,
        OPENAI_API_KEY=key,
        OPENROUTER_API_KEY=key,
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        NO_PROXY="127.0.0.1,localhost",
    )
    return env


def run_vab(
    harness: Path, data: Path, work: Path, python: str, base_url: str, key: str
) -> list[Row]:
    """eval.py for each model, summarize.py, then our importer and metrics."""
    rows = []
    local = work / VAB_REPO
    local.mkdir(parents=True, exist_ok=True)
    shutil.copytree(data / "synth-vab" / "data", local / "data", dirs_exist_ok=True)
    env = _env(base_url, key)
    results = work / "results"
    for model in MODELS:
        ok, out = _run(
            [python, str(harness / "eval.py"), "--model", f"openai/{model}",
             "--api-base", base_url, "--api-key", key, "--concurrency", "8",
             "--output-dir", str(results)],
            work, env, work / f"vab-eval-{model}.log",
        )  # fmt: skip
        done = re.search(r"Results saved to|already complete", out) is not None
        summary = " ".join(m.group(0) for m in re.finditer(r"pick_\w+:\s+\d+/\d+ = [\d.]+%", out))
        if not summary and "already complete" in out:
            summary = "already complete in the work folder; kept"
        rows.append(Row("VAB", f"eval.py {model}", ok and done, summary or out[-200:]))
    ok, out = _run(
        [python, str(harness / "summarize.py"), "--results-dir", str(results),
         "-o", str(work / "summary.json")],
        work, env, work / "vab-summarize.log",
    )  # fmt: skip
    text = "could not summarise"
    if ok and (work / "summary.json").is_file():
        summary = json.loads((work / "summary.json").read_text())
        text = "; ".join(
            f"{name}: p^3 best {s['pick_best']['accuracy']:.3f}, worst "
            f"{s.get('pick_worst', {}).get('accuracy', float('nan')):.3f}, both "
            f"{s['pick_best_and_worst']['accuracy_both']:.3f}"
            for name, s in summary.items()
        )
    rows.append(Row("VAB", "summarize.py", ok, text))
    files = sorted(results.glob("*.json"))
    pred, tasks = vab.load_predictions(files)
    scores = vab.task_scores(pred, tasks, repetitions=(0, 1, 2))
    acc = vab.accuracy_wide(vab.accuracy_table(scores, n_resamples=200, seed=0))
    text = "; ".join(
        f"{r.judge} {r.metric} ap@1 {r.ap1:.3f} pass^3 {r.pass3:.3f}"
        for r in acc.itertuples()
        if r.metric in ("top1", "bot1")
    )
    rows.append(Row("VAB", "judgepanel import vab-results", bool(len(files)), text))
    if (work / "summary.json").is_file():
        gap = _vab_gap(json.loads((work / "summary.json").read_text()), acc)
        rows.append(Row("VAB", "ours vs summarize.py", gap < 1e-9, f"largest difference {gap:.2g}"))
    return rows


def _vab_gap(summary: dict, acc) -> float:
    """Largest gap between summarize.py's ap@1 / pass^3 and ours, over models and prompts."""
    names = {"top1": "pick_best", "bot1": "pick_worst", "tb1": "pick_best_and_worst"}
    gap = 0.0
    for r in acc.itertuples():
        s = summary.get(r.judge)
        if s is None:
            return float("inf")
        ap1 = s["avg_pass_at_1"][names[r.metric] + ("_both" if r.metric == "tb1" else "")]
        p3 = s[names[r.metric]]["accuracy_both" if r.metric == "tb1" else "accuracy"]
        gap = max(gap, abs(ap1 - r.ap1), abs(p3 - r.pass3))
    return gap


def _score_line(out: str) -> str:
    found = re.search(r"Overall accuracy:\s*(.+)", out)
    counts = {k: re.search(rf"{k}\s*:\s*(\d+)", out) for k in ("Total records", "Unparseable")}
    parts = [f"{k.split()[0].lower()} {m.group(1)}" for k, m in counts.items() if m]
    return ", ".join(parts) + (f"; accuracy {found.group(1).strip()}" if found else "")


def run_visionq(
    harness: Path, data: Path, work: Path, python: str, base_url: str, key: str, limit: int
) -> list[Row]:
    """bench_run.py (composite, then per-image on a sample) and bench_score.py."""
    rows = []
    work.mkdir(parents=True, exist_ok=True)
    root = data / "synth-visionq"
    bench = harness / "benchmark"
    (work / "run_bench.py").write_text(SHIM, encoding="utf-8")
    env = _env(base_url, key) | {"VISIONQ_DATA": str(root)}
    files = []
    runs = [(m, ["--composite"], 0) for m in MODELS] + [(MODELS[0], [], limit)]
    for model, mode, n in runs:
        tag = f"{model}{'' if mode else '-per-image'}"
        out_file = work / "predictions" / f"test_questions_or_{tag}_p1.jsonl"
        cmd = [python, str(work / "run_bench.py"), "--provider", "openrouter", "--model", model,
               *mode, "--tag-quality", "--concurrency", "4", "--out", str(out_file),
               "--questions", str(root / "data/benchmark/test_questions.jsonl"),
               "--data-points", str(root / "data/benchmark/data_points.jsonl")]  # fmt: skip
        if n:
            cmd += ["--limit", str(n)]
        ok, out = _run(cmd, bench, env, work / f"visionq-run-{tag}.log")
        eligible = re.search(r"Eligible: (\d+/\d+)", out)
        rows.append(
            Row("VisionQ", f"bench_run.py {tag}", ok and out_file.is_file(),
                f"eligible {eligible.group(1)}" if eligible else out[-200:])
        )  # fmt: skip
        if not out_file.is_file():
            continue
        if mode:
            files.append(out_file)
        ok, out = _run(
            [python, "bench_score.py", str(out_file), "--slice", "eligible"],
            bench, env, work / f"visionq-score-{tag}.log",
        )  # fmt: skip
        rows.append(Row("VisionQ", f"bench_score.py {tag}", ok, _score_line(out)))
    if files:
        preds = visionq.load_predictions(files)
        acc = visionq.accuracy_table(preds, rotation=0, n_resamples=200, seed=0)
        text = "; ".join(
            f"{r.judge} {r.accuracy:.3f} of {int(r.n)} [{r.ci_low:.3f}, {r.ci_high:.3f}]"
            for r in acc.itertuples()
        )
        rows.append(Row("VisionQ", "judgepanel import visionq-predictions", True, text))
    return rows


def interop_command(
    folder: Path, data: Path, python: str, work: Path | None = None, limit: int = 40
) -> int:
    """Run every harness found in ``folder``; print the table; 1 when a step failed."""
    if not folder.is_dir():
        print(f"interop: {folder}: not a folder (set INTEROP_DIR)", file=sys.stderr)
        return 1
    vab_dir = _find(folder, "eval.py", "summarize.py")
    vq_dir = _find(folder, "benchmark/bench_run.py", "benchmark/bench_score.py")
    if vab_dir is None and vq_dir is None:
        print(f"interop: no harness found under {folder}", file=sys.stderr)
        return 1
    for world in ("synth-vab", "synth-visionq"):
        if not (data / world).is_dir():
            print(f"interop: {data / world} is missing (run make data)", file=sys.stderr)
            return 1
    work = Path(work or tempfile.mkdtemp(prefix="judgepanel-interop-"))
    work.mkdir(parents=True, exist_ok=True)
    key = "sim-interop-key"
    rows: list[Row] = []
    with start_sim_server(SimConfig(seed=0), log_dir=work) as server:
        if vab_dir is not None:
            rows += run_vab(vab_dir, data.resolve(), work / "vab", python, server.base_url, key)
        if vq_dir is not None:
            rows += run_visionq(
                vq_dir, data.resolve(), work / "visionq", python, server.base_url, key, limit
            )
    width = max(len(r.step) for r in rows)
    print(f"\n{'harness':8} {'step':{width}} {'ok':3} result")
    for r in rows:
        print(f"{r.harness:8} {r.step:{width}} {'yes' if r.ok else 'NO':3} {r.result}")
    print(f"\nlogs and outputs: {work}")
    return 0 if all(r.ok for r in rows) else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m judgepanel_sim.interop", description=__doc__)
    parser.add_argument("--dir", type=Path, required=True, help="where the harnesses are")
    parser.add_argument("--data", type=Path, default=Path("data/synth"))
    parser.add_argument("--python", default=sys.executable, help="Python for the harnesses")
    parser.add_argument("--work", type=Path, help="keep logs and outputs here")
    parser.add_argument("--limit", type=int, default=40, help="questions in per-image mode")
    args = parser.parse_args(argv)
    return interop_command(args.dir, args.data, args.python, args.work, args.limit)


if __name__ == "__main__":
    sys.exit(main())
