"""Soak: one scoring run through client kills and server outages, then a full audit.

Plans a few thousand rubric calls and sends them with ``run_calls`` from a child process,
against the simulated judge server started with a ledger (one JSON line per answer it
billed). While the plan is not done it ``kill -9``s the client (``--client-kills`` times,
at random moments) and the server (``--server-kills`` times, for a random outage of 1-12 s,
then restarted on the same port), and starts the client again whenever it has exited:
killed, stopped early by the outage (exit 4, "unreachable"), or done.

The audit at the end:

* the store holds exactly the planned keys, each once, all ``ok``;
* every answer the server billed is accounted: matched to its call by model and seed
  (re-asks use derived seeds), a call's billed answers equal those the store recorded for
  it, plus at most ``1 + max_reasks`` per reservation of it left by a killed client
  (possibly billed, unanswered), and the store's spend equals the priced ledger of the
  recorded answers.

Prints a one-line JSON summary. Not part of ``make bench`` (it kills processes and takes
minutes). Usage: python bench/soak_outage.py [--images 50] [--client-kills 20]
[--server-kills 3] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import pandas as pd
from bench_client import make_images

from judgepanel.core.calls import KEY_FIELDS, CallSpec
from judgepanel.core.client import reask_seed
from judgepanel.core.config import Price, ScoringDesign
from judgepanel.core.local_sim import SimConfig, SimProcess, start_sim_server
from judgepanel.core.store import Store
from judgepanel.studies.common.rubric_plan import plan_images

FAMILIES = {"aurora": "sim-aurora-v1", "cobalt": "sim-cobalt-v1"}
PRICES = {"sim-aurora-v1": Price(0.30, 2.50), "sim-cobalt-v1": Price(0.10, 0.30)}
DESIGN = ScoringDesign(holistic_k=10, dimension_r=4, temperature=0.3)
MAX_REASKS = 2
LATENCY_MS = 80
CLIENT = """
import sys
import pandas as pd
from judgepanel.core.client import run_calls
from judgepanel.core.sendconfig import ClientOptions
from judgepanel.core.store import Store
from judgepanel.core.endpoint import Endpoint
sys.path.insert(0, sys.argv[4])
from soak_outage import PRICES, plan
specs = plan(pd.read_csv(sys.argv[3]))
with Store(sys.argv[2]) as store:
    s = run_calls(specs, store, prices=PRICES, options=ClientOptions(
        endpoint=Endpoint.at(sys.argv[1]), concurrency=16, max_reasks=2, progress=False))
print(s.line(), flush=True)
sys.exit(4 if s.aborted else 0)
"""


def plan(images: pd.DataFrame) -> list[CallSpec]:
    """The soak's plan: 2 families x 30 calls per image."""
    return plan_images(images, FAMILIES, DESIGN, dataset="eva")


def stored(store: Path) -> int:
    try:
        con = sqlite3.connect(store, timeout=5)
        n = con.execute("SELECT COUNT(*) FROM calls WHERE status = 'ok'").fetchone()[0]
        con.close()
        return int(n)
    except sqlite3.OperationalError:
        return 0


def audit(store_path: Path, ledger_path: Path, specs: list[CallSpec]) -> dict[str, object]:
    """Match every billed answer to its call and compare with what the store recorded."""
    by_seed = {}
    for spec in specs:
        for reask in range(MAX_REASKS + 1):
            by_seed[(spec.key.model, reask_seed(spec.seed, reask))] = spec.key.as_tuple()
    billed = [json.loads(line) for line in ledger_path.read_text().splitlines()]
    per_call = Counter(by_seed.get((b["model"], b["seed"])) for b in billed)
    unmatched = per_call.pop(None, 0)
    with Store(store_path, readonly=True) as store:
        df = store.frame()
        lost_bound = store.possibly_billed()
        spend = store.spend()
    con = sqlite3.connect(store_path)
    lost = Counter(tuple(json.loads(k)) for (k,) in con.execute("SELECT key FROM interrupted"))
    con.close()
    keys = [tuple(r) for r in df[list(KEY_FIELDS)].itertuples(index=False)]
    recorded = dict(zip(keys, df.billed, strict=True))
    over = under = beyond = 0
    for key in set(per_call) | set(recorded):
        extra = per_call.get(key, 0) - int(recorded.get(key, 0))
        if extra < 0:
            under += 1  # the store counts an answer the server never billed
        elif extra > 0:
            over += extra
            if extra > lost.get(key, 0) * (1 + MAX_REASKS):
                beyond += 1  # billed, unrecorded, and no reservation to show for it
    ledger_cost = sum(
        PRICES[b["model"]].cost(b["prompt_tokens"], b["completion_tokens"]) for b in billed
    )
    planned = {s.key.as_tuple() for s in specs}
    return {
        "planned": len(planned),
        "stored": len(df),
        "keys_exact": set(keys) == planned and len(keys) == len(planned),
        "all_ok": bool((df.status == "ok").all()),
        "billed_by_server": len(billed),
        "billed_recorded": int(df.billed.sum()),
        "billed_unmatched": unmatched,
        "billed_in_flight_at_kills": over,
        "calls_with_unaccounted_bills": beyond,
        "calls_recorded_beyond_bill": under,
        "interrupted_reservations": lost_bound.calls,
        "interrupted_bound_usd": round(lost_bound.bound, 6),
        "spend_store_usd": round(spend, 6),
        "spend_server_usd": round(ledger_cost, 6),
        "spend_gap_usd": round(ledger_cost - spend, 6),
    }


class Soak:
    """The processes of the soak: one simulated server (restartable on its port) and one
    client at a time."""

    def __init__(self, work: Path, table: Path, ledger: Path) -> None:
        self.work, self.table, self.ledger = work, table, ledger
        self.store = work / "store.sqlite"
        self.server: SimProcess = self._start_server(0, seed=0)
        self.port = self.server.port
        self.client: subprocess.Popen | None = None
        self.launches = self.early_stops = 0

    def _start_server(self, port: int, seed: int) -> SimProcess:
        return start_sim_server(
            SimConfig(latency_ms=LATENCY_MS, malformed_rate=0.03, ledger=self.ledger, seed=seed),
            port=port,
        )

    def restart_server(self, seed: int) -> None:
        self.server = self._start_server(self.port, seed)

    def kill_server(self) -> None:
        os.kill(self.server.process.pid, signal.SIGKILL)
        self.server.process.wait()

    def launch(self) -> None:
        env = {**os.environ, "OPENAI_API_KEY": "sim-soak"}
        here = str(Path(__file__).resolve().parent)
        self.client = subprocess.Popen(
            [sys.executable, "-c", CLIENT, self.server.base_url, str(self.store),
             str(self.table), here],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
        )  # fmt: skip
        self.launches += 1

    def kill_client(self) -> None:
        assert self.client is not None
        os.kill(self.client.pid, signal.SIGKILL)
        self.client.wait()

    def client_exited(self) -> int | None:
        """The exit code of a client that ended by itself (``None`` while it runs)."""
        code = self.client.poll() if self.client is not None else None
        if code == 4:
            self.early_stops += 1
        return code


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=80)
    parser.add_argument("--client-kills", type=int, default=20)
    parser.add_argument("--server-kills", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="soak-"))
    images = make_images(work / "img", args.images)
    table = work / "images.csv"
    images.to_csv(table, index=False)
    specs = plan(images)
    soak = Soak(work, table, work / "billed.jsonl")
    started = time.monotonic()
    client_kills = server_kills = 0
    # events: a client kill after a random number of newly stored calls; the outages
    # replace some of them (the server dies while the client sends, for 2-20 s)
    events = ["client"] * args.client_kills + ["server"] * args.server_kills
    rng.shuffle(events)
    while True:
        soak.launch()
        base = stored(soak.store)
        event = events.pop(0) if events else None
        trigger = base + rng.randint(20, 200)
        while soak.client_exited() is None:
            if event is not None and stored(soak.store) >= trigger:
                if event == "client":
                    soak.kill_client()
                    client_kills += 1
                    event = None
                else:
                    soak.kill_server()
                    server_kills += 1
                    time.sleep(rng.uniform(2.0, 20.0))
                    soak.restart_server(seed=server_kills)
                    # the client may have ridden the outage out: it meets the next event
                    event = events.pop(0) if events else None
                    trigger = stored(soak.store) + rng.randint(20, 200)
            time.sleep(0.02)
        if event is not None:
            events.insert(0, event)  # the client ended before its event: keep it
        if soak.client.returncode == 0 and stored(soak.store) == len(specs):
            break
    elapsed = time.monotonic() - started
    soak.server.stop()
    result = {
        "client_kills": client_kills,
        "server_kills": server_kills,
        "events_left": len(events),
        "client_launches": soak.launches,
        "stopped_early_by_outage": soak.early_stops,
        "seconds": round(elapsed, 1),
        **audit(soak.store, soak.ledger, specs),
    }
    print(json.dumps(result))
    return 0 if result["keys_exact"] and not result["calls_with_unaccounted_bills"] else 1


if __name__ == "__main__":
    sys.exit(main())
