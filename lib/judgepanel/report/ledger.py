"""The report's claims ledger on disk: each run's ``claims.json``, merged into
``outputs/claims.csv`` (and ``claims.json``) and a page of its own, ``claims.html``.

A notebook records a claim through :meth:`judgepanel.report.nbtools.Notebook.claim`, which
writes the row under ``<run>/claims.json`` (the notebooks of a run may execute at once, so
the update is locked, as headlines are) and returns the sentence that states it, wrapped in
a link to its row: ``<a data-claim="ID" href="../claims.html#ID">``. Every page that states
the comparison quotes that row, so the verdict is the same wherever it is read.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pandas as pd

from judgepanel.claims.rows import Claim, Family, contradictions
from judgepanel.core.config import Config
from judgepanel.report.jsonfile import update_json, write_json
from judgepanel.report.manifest import FAMILIES_TABLE, LEDGER_TABLE, write_table

CLAIMS_FILE = "claims.json"
"""Per run: ``{notebook: {claim id: row}}``; at the top of the outputs: every row."""
LEDGER_CSV = LEDGER_TABLE
LEDGER_PAGE = "claims.html"
COLUMNS = (
    "id", "verdict", "kind", "a", "b", "dataset", "scope", "metric", "unit", "estimate",
    "ci_low", "ci_high", "level", "p", "q", "alternative", "family", "alpha", "margin",
    "excluded", "role", "spread_n", "spread_mean", "spread_p05", "spread_p95", "note", "page",
    "anchor", "symbol", "in_points",
)  # fmt: skip
"""The ledger's columns, in the order ``claims.csv`` writes them: ``kind`` says which test
a row states (and so its verdict words), ``level`` its interval's coverage, ``margin`` a
margin stated before the result; ``symbol`` and ``in_points`` let a row be worded again."""
HIDDEN = ("id", "verdict", "page", "symbol", "in_points")
"""Columns the ledger page shows elsewhere in a row (id, verdict, page) or not at all."""
FAMILY_COLUMNS = ("name", "description", "alpha", "method", "page")


def full_id(run: str, notebook: str, claim_id: str) -> str:
    """The id of a claim across the report: run, notebook number and the study's id."""
    return f"{run}.{notebook[:2]}.{claim_id}"


def claim_link(claim: Claim, text: str, *, from_page: bool = True) -> str:
    """``text`` as a link to the claim's row of the ledger page, marked with its id."""
    href = f"{'../' if from_page else ''}{LEDGER_PAGE}#{claim.id}"
    return (
        f'<a class="jp-claim" data-claim="{html.escape(claim.id)}" '
        f'data-verdict="{html.escape(claim.verdict)}" href="{href}">{html.escape(text)}</a>'
    )


def reference_link(claim_id: str, text: str, *, from_page: bool = True) -> str:
    """``text`` as a link to another page's ledger row, marked ``data-claim-ref`` with its
    id: the page names the comparison and leaves its verdict to the page that owns it."""
    href = f"{'../' if from_page else ''}{LEDGER_PAGE}#{claim_id}"
    return (
        f'<a class="jp-claim-ref" data-claim-ref="{html.escape(claim_id)}" '
        f'href="{href}">{html.escape(text)}</a>'
    )


def owner_run(config: Config, run: str, notebook: str, dataset: str) -> str | None:
    """The run of ``run``'s profile that executes ``notebook`` on ``dataset`` alone (where
    the ledger row of a comparison owned by that notebook lives), or None."""
    profile = config.run(run).profile.name
    for other in config.runs_of(profile):
        if notebook in other.notebooks and other.datasets == (dataset,):
            return other.name
    return None


def _clean(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def record(
    run_dir: Path,
    notebook: str,
    claim: Claim | None = None,
    family: Family | None = None,
    *,
    claims: Sequence[Claim] = (),
    families: Sequence[Family] = (),
) -> None:
    """Add claims and declared families to the run's ledger, in one locked rewrite of its
    file; with none, drop the notebook's rows (a notebook starting again leaves no stale
    claim behind).

    A table's rows go in together (``claims``): the file holds every notebook's rows of the
    run, and rewriting it once a row made a page of 140 rows spend a second and a half on it.
    """
    new_claims = [*([claim] if claim is not None else []), *claims]
    new_families = [*([family] if family is not None else []), *families]

    def change(data: dict[str, Any]) -> bool:
        if not new_claims and not new_families:
            return data.pop(notebook, None) is not None
        entry = data.setdefault(notebook, {"families": {}, "claims": {}})
        for fam in new_families:
            entry["families"][fam.name] = {**asdict(fam), "page": f"{run_dir.name}/{notebook}"}
        for row in new_claims:
            if row.id in entry["claims"]:
                raise ValueError(f"claim {row.id!r} is recorded twice by {notebook}")
            entry["claims"][row.id] = {k: _clean(v) for k, v in row.as_row().items()}
        return True

    update_json(run_dir / CLAIMS_FILE, change, sort_keys=False)


def mark_headline(run_dir: Path, notebook: str, claim_id: str) -> None:
    """Mark a recorded row as one the index quotes (``role`` ``headline``): the index's key
    claims are the rows its headlines quote."""

    def change(data: dict[str, Any]) -> bool:
        row = data[notebook]["claims"][claim_id]
        if row.get("role") == "headline":
            return False
        row["role"] = "headline"
        return True

    update_json(run_dir / CLAIMS_FILE, change, sort_keys=False)


def _entries(outputs: Path, config: Config) -> list[dict[str, Any]]:
    found = []
    for run in config.runs.values():
        path = Path(outputs) / run.name / CLAIMS_FILE
        if path.exists():
            data = json.loads(path.read_text(encoding="utf-8"))
            found += [data[name] for name in sorted(data)]
    return found


def collect(outputs: Path, config: Config) -> pd.DataFrame:
    """Every run's claims, in the runs file's order of runs and notebooks."""
    rows = [row for e in _entries(outputs, config) for row in e["claims"].values()]
    return pd.DataFrame(rows, columns=list(COLUMNS))[list(COLUMNS)]


def families(outputs: Path, config: Config) -> list[dict[str, Any]]:
    """Every correction family a row of the ledger was corrected in, as it was declared
    (a page records a family with its first row: a family without rows is not listed)."""
    return [f for e in _entries(outputs, config) for f in e["families"].values()]


def write_ledger(outputs: Path, config: Config) -> pd.DataFrame:
    """Write ``outputs/claims.csv``, ``claims.json`` and the families the rows were
    corrected in, ``claim_families.csv``, from the runs' ledgers.

    Raises:
        ValueError: two rows compare the same things on the same data with different
            verdicts (the report would contradict itself).
    """
    frame = collect(outputs, config)
    problems = contradictions(frame)
    if problems:
        raise ValueError("the claims ledger contradicts itself:\n" + "\n".join(problems))
    write_table(frame, Path(outputs) / LEDGER_CSV)
    fams = pd.DataFrame(families(outputs, config), columns=list(FAMILY_COLUMNS))
    write_table(fams[list(FAMILY_COLUMNS)], Path(outputs) / FAMILIES_TABLE)
    records = [{k: _clean(v) for k, v in r.items()} for r in frame.to_dict(orient="records")]
    write_json(Path(outputs) / CLAIMS_FILE, records, sort_keys=False)
    return frame


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, float):
        return f"{value:.4g}"
    return html.escape(str(value))


SPREAD = ("spread_n", "spread_mean", "spread_p05", "spread_p95")
"""The columns the page shows as one cell, ``partition spread``."""


def _spread(r: dict[str, Any]) -> str:
    n = r.get("spread_n")
    if not n or (isinstance(n, float) and math.isnan(n)):
        return "–"
    return (
        f"{r['spread_mean']:+.3f} ({r['spread_p05']:+.3f} to {r['spread_p95']:+.3f}), "
        f"{int(n)} partitions"
    )


def ledger_rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The ledger's rows as the page shows them: each cell as text, the page as a link."""
    shown = []
    for r in frame.to_dict(orient="records"):
        page = str(r.get("page") or "")
        anchor = str(r.get("anchor") or "")
        shown.append(
            {
                "id": str(r["id"]),
                "verdict": str(r["verdict"]),
                "href": f"{page}.html" if page else "",
                "where": page + (f" · {anchor}" if anchor else ""),
                "cells": [
                    _spread(r) if c == "spread_n" else _cell(r[c])
                    for c in COLUMNS
                    if c not in (*HIDDEN, *SPREAD[1:])
                ],
            }
        )
    return shown


LEDGER_HEADERS = [
    "partition spread" if c == "spread_n" else c for c in COLUMNS if c not in (*HIDDEN, *SPREAD[1:])
]
