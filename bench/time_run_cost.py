"""Benchmark: one scoring run's wall and CPU time a call, against another copy of the code.

Scores one run of a runs file (``--run``, e.g. ``demo-logprob``) into a fresh store through
a fresh simulated judge server (the report's: ``report_cost`` on), once with this
checkout's ``lib`` and once with another copy's (``--against``, a folder holding a
``lib``, e.g. ``git archive REV lib | tar -x -C DIR``), alternately, ``--pairs`` times.

The score command runs as its own process, timed from after its imports (a report scores
in a process that has imported them) to its end: its wall time and its CPU time, and the
server's CPU time over the same span (from /proc), each divided by the calls stored.
``--warm RUN`` first scores RUN through the same server with one family and one call a
prompt (online, into a throwaway store), as a report's lane has scored the sampled run of
the same images before the logprob run: the server then knows the images' features.

``--seed-store FILE`` starts each run from a copy of FILE instead of an empty store, for a
run whose calls are mostly stored already (``demo-temperature`` after ``demo-eva`` and
``demo-para``: a copy of the report's store without the temperature grid's rows); the
figures are then a call of those this run stored, or the run's own milliseconds when it
stores none (a plan stored already, such as ``demo-eva`` on the report's store).

The stored answers of every run are compared: each store's rows (key, answer, parsed
record, tokens, cost...) must hash alike, so a faster copy is also one that stores the
same answers. Prints one line a run, the median ratio of each figure over the pairs with
its spread, and a one-line JSON summary last; exits 1 if the rows differ.

Usage: python bench/time_run_cost.py --runs-file RUNS.yaml --run demo-logprob
       --against DIR [--pairs 3] [--warm demo-eva] [--seed-store STORE]
       [--profile-server OUT.prof] [--profile-client OUT.prof] (one run, profiled)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROW_COLUMNS = (
    "dataset, item, family, model, kind, dimension, repetition, temperature, rubric_sha, "
    "prompt_hash, answer, value, parsed, status, reason, failure, prompt_tokens, "
    "completion_tokens, cost, attempts, reasks, billed, finish_reason, seed, cached_tokens, "
    "reported_cost, samples_per_request"
)
SCORE_SCRIPT = """\
import json, sys, time
import openai  # imported on a command's first send; a report's process has it already
from judgepanel.cli import main

out = sys.argv.pop(1)
start, cpu = time.perf_counter(), time.process_time()
code = main(sys.argv[1:])
with open(out, "w") as fh:
    json.dump({"wall": time.perf_counter() - start, "cpu": time.process_time() - cpu}, fh)
sys.exit(code)
"""
"""The score command, timed from after its imports (the SDK's too) to its end: wall and
CPU seconds."""
WARM_FLAGS = ("--holistic-k", "1", "--dimension-r", "1", "--no-batch")
"""A warming run's design: one call a prompt, online."""


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a live process ``pid`` (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _env(lib: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_BASE_URL"}
    env["PYTHONPATH"] = str(lib)
    env["OPENAI_API_KEY"] = "sk-bench"
    return env


def _start_server(lib: Path, work: Path, profile: Path | None) -> tuple[subprocess.Popen, int]:
    port_file = work / "port"
    cmd = [sys.executable]
    if profile is not None:
        cmd += ["-m", "cProfile", "-o", str(profile)]
    cmd += ["-m", "judgepanel_sim", "serve", "--port", "0", "--port-file", str(port_file)]
    cmd += ["--report-cost"]
    env = _env(lib)
    env.pop("OPENAI_API_KEY")
    log = (work / "server.log").open("wb")
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
    log.close()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        text = port_file.read_text().strip() if port_file.exists() else ""
        if text.isdigit():
            return proc, int(text)
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"the server did not start: {(work / 'server.log').read_text()[-2000:]}")


def _stored(store: Path, after: int = 0) -> tuple[int, str, int]:
    """The calls stored ok and a digest of every stored row (of those past rowid
    ``after``: a seeded store's own rows are left out), and the last rowid."""
    con = sqlite3.connect(store)
    try:
        rows = con.execute(
            f"SELECT {ROW_COLUMNS} FROM calls WHERE rowid > ? ORDER BY {ROW_COLUMNS}", (after,)
        ).fetchall()
        ok = con.execute(
            "SELECT count(*) FROM calls WHERE status = 'ok' AND rowid > ?", (after,)
        ).fetchone()[0]
        last = con.execute("SELECT coalesce(max(rowid), 0) FROM calls").fetchone()[0]
    finally:
        con.close()
    return ok, hashlib.sha256(repr(rows).encode()).hexdigest()[:16], last


def _score(
    lib: Path, work: Path, port: int, args: list[str], profile: Path | None = None
) -> dict[str, float]:
    """Run ``judgepanel score ARGS`` against the server on ``port``: its wall and CPU
    seconds after its imports."""
    script = work / "score.py"
    script.write_text(SCORE_SCRIPT)
    times = work / "times.json"
    cmd = [sys.executable]
    if profile is not None:
        cmd += ["-m", "cProfile", "-o", str(profile)]
    cmd += [str(script), str(times), "score", *args, "--no-progress"]
    cmd += ["--base-url", f"http://127.0.0.1:{port}/v1"]
    done = subprocess.run(cmd, env=_env(lib), cwd=ROOT, capture_output=True)
    if done.returncode != 0:
        raise RuntimeError(f"score failed: {done.stderr.decode()[-2000:]}")
    return json.loads(times.read_text())


def one_run(
    lib: Path,
    runs_file: Path,
    run: str,
    *,
    warm: str | None = None,
    seed_store: Path | None = None,
    profile_server: Path | None = None,
    profile_client: Path | None = None,
) -> dict[str, float | str]:
    """Score ``run`` with ``lib`` into a fresh store (a copy of ``seed_store`` if given)
    through a fresh server (warmed by ``warm``, a run of the same images)."""
    with tempfile.TemporaryDirectory(prefix="bench-run-cost-") as tmp:
        work = Path(tmp)
        seeded = 0  # the seed store's last rowid: this run's rows come after it
        if seed_store is not None:
            shutil.copyfile(seed_store, work / "store.sqlite")
            seeded = _stored(work / "store.sqlite", 1 << 62)[2]
        server, port = _start_server(lib, work, profile_server)
        try:
            if warm is not None:
                args = ["--run", warm, "--runs-file", str(runs_file)]
                args += ["--store", str(work / "warm.sqlite"), *WARM_FLAGS]
                # one family: the first of the profile's, by its model
                _score(lib, work, port, [*args, "--families", "aurora"])
            server_cpu0 = _cpu_seconds(server.pid)
            args = ["--run", run, "--runs-file", str(runs_file)]
            args += ["--store", str(work / "store.sqlite")]
            times = _score(lib, work, port, args, profile_client)
            server_cpu = _cpu_seconds(server.pid) - server_cpu0
        finally:
            server.send_signal(signal.SIGINT if profile_server else signal.SIGTERM)
            server.wait(timeout=60)
        calls, digest, _ = _stored(work / "store.sqlite", seeded)
    ms = 1000.0 / max(calls, 1)  # a plan stored already: the run's milliseconds
    return {
        "calls": calls,
        "wall_s": times["wall"],
        "cpu_s": times["cpu"] + server_cpu,
        "wall_ms": times["wall"] * ms,
        "client_cpu_ms": times["cpu"] * ms,
        "server_cpu_ms": server_cpu * ms,
        "cpu_ms": (times["cpu"] + server_cpu) * ms,
        "rows": digest,
    }


FIGURES = ("wall_ms", "cpu_ms", "client_cpu_ms", "server_cpu_ms")


def _line(got: dict[str, float | str]) -> str:
    shown = " ".join(f"{f} {float(got[f]):.3f}" for f in FIGURES)
    spent = f"wall {float(got['wall_s']):.1f} s, CPU {float(got['cpu_s']):.1f} s"
    return f"{got['calls']} calls, {shown} ({spent}), rows {got['rows']}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs-file", type=Path, required=True)
    parser.add_argument("--run", required=True)
    parser.add_argument("--against", type=Path, help="a folder with the other copy's lib")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--warm", help="a run of the same images to score first (see above)")
    parser.add_argument("--seed-store", type=Path, help="a store each run starts from (copied)")
    parser.add_argument("--profile-server", type=Path, help="cProfile the server into a file")
    parser.add_argument("--profile-client", type=Path, help="cProfile the score command")
    args = parser.parse_args(argv)
    own, runs_file = ROOT / "lib", args.runs_file.resolve()
    if args.profile_server or args.profile_client or args.against is None:
        got = one_run(
            own,
            runs_file,
            args.run,
            warm=args.warm,
            seed_store=args.seed_store,
            profile_server=args.profile_server,
            profile_client=args.profile_client,
        )
        print(_line(got))
        print(json.dumps({"bench": "run_cost", "run": args.run, **got}))
        return 0
    other = args.against.resolve() / "lib"
    ratios: dict[str, list[float]] = {f: [] for f in FIGURES}
    digests = set()
    for pair in range(args.pairs):
        before = one_run(other, runs_file, args.run, warm=args.warm, seed_store=args.seed_store)
        print(f"pair {pair + 1} before: {_line(before)}", flush=True)
        after = one_run(own, runs_file, args.run, warm=args.warm, seed_store=args.seed_store)
        print(f"pair {pair + 1} after:  {_line(after)}", flush=True)
        digests |= {before["rows"], after["rows"]}
        for f in FIGURES:
            ratios[f].append(float(after[f]) / float(before[f]))
    summary = {
        f: {"median": statistics.median(r), "min": min(r), "max": max(r)} for f, r in ratios.items()
    }
    same = len(digests) == 1
    print(json.dumps({"bench": "run_cost", "run": args.run, "ratios": summary, "same_rows": same}))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
