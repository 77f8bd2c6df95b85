"""``outputs/index.html``: every executed notebook of the runs file, with its headline numbers.

Each notebook's outcome is recorded beside it (``outputs/<run>/notebooks.json``), so an
index written after re-running one analysis still lists the notebooks executed before.
The page is rendered from a Jinja2 template (``templates/index.html.j2``).
"""

from __future__ import annotations

import html
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
import pandas as pd

from judgepanel.claims import wording
from judgepanel.claims.rows import LEADS, NOT_TESTED, PASSES, Claim, claim_of_row
from judgepanel.core.config import Config
from judgepanel.report import ledger
from judgepanel.report.glossary import GLOSSARY, link_terms
from judgepanel.report.jsonfile import update_json
from judgepanel.report.manifest import MANIFEST_NAME, read_manifest
from judgepanel.report.page import static_text
from judgepanel.report.provenance import read_provenance
from judgepanel.studies.agreement.card import read_card

OUTCOMES_FILE = "notebooks.json"
HEADLINES_FILE = "headlines.json"
AGREEMENT_PAGE = "10_agreement"
"""The page whose judge card (``tables/judge_card.csv``) the index shows per run."""

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("judgepanel.report", "templates"),
    autoescape=True,
    keep_trailing_newline=True,
    trim_blocks=True,
    lstrip_blocks=True,
)


def _num(x: Any) -> str:
    """A table cell's number as the report's prose writes it (a true minus sign, never
    "−0.000"), "–" where there is none."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return "–"
    return wording.number(v) if math.isfinite(v) else "–"


_ENV.filters["num"] = _num


@dataclass(frozen=True)
class NotebookResult:
    """One executed notebook."""

    run: str
    notebook: str
    ok: bool
    seconds: float
    html: Path | None
    error: str = ""


def _outcomes_path(outputs: Path, run: str) -> Path:
    return outputs / run / OUTCOMES_FILE


def record_outcome(outputs: Path, result: NotebookResult) -> None:
    """Record a notebook's outcome beside it, so a later index still lists it."""

    def change(known: dict[str, Any]) -> bool:
        known[result.notebook] = {"ok": result.ok, "seconds": result.seconds, "error": result.error}
        return True

    update_json(_outcomes_path(outputs, result.run), change)


def recorded_outcomes(outputs: Path, run: str) -> dict[str, NotebookResult]:
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


def headline_lines(outputs: Path, results: list[NotebookResult]) -> list[tuple[str, str]]:
    """The headline sentences of the runs of ``results``, for the end-of-report summary."""
    lines: list[tuple[str, str]] = []
    for run in dict.fromkeys(r.run for r in results):
        path = outputs / run / HEADLINES_FILE
        heads = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        for r in results:
            if r.run == run:
                lines += [(run, str(h["text"])) for h in heads.get(r.notebook, {}).values()]
    return lines


def _files(run_dir: Path, folder: str, pattern: str) -> list[str]:
    """The files of ``run_dir/folder`` as links relative to the index."""
    base = run_dir / folder
    return [f"{run_dir.name}/{folder}/{p.name}" for p in sorted(base.glob(pattern))]


_FIGURE = re.compile(r"\b(figures/[\w.+-]+\.png)")


def lead_figure(page: Path | None) -> str | None:
    """The first figure a notebook's page shows (``figures/<name>.png``, relative to its run
    folder), which the index shows small beside the notebook; None for a page without one."""
    if page is None or not page.exists():
        return None
    m = _FIGURE.search(page.read_text(encoding="utf-8"))
    return m.group(1) if m and (page.parent / m.group(1)).exists() else None


def write_index(outputs: Path, results: list[NotebookResult], config: Config) -> Path:
    """Write ``outputs/index.html``: every executed notebook with its headline numbers.

    ``results`` are this command's executions; notebooks of the runs file executed by an
    earlier command (their outcome is recorded in ``outputs/<run>/notebooks.json``) are
    listed too, so re-running one analysis does not drop the others from the index.
    """
    fresh = {(r.run, r.notebook): r for r in results}
    claims = ledger.collect(outputs, config)
    verdicts = dict(zip(claims["id"].astype(str), claims["verdict"].astype(str), strict=True))
    runs: list[dict[str, Any]] = []
    for run in config.runs.values():
        earlier = recorded_outcomes(outputs, run.name)
        items = [
            r
            for name in run.notebooks
            if (r := fresh.get((run.name, name)) or earlier.get(name)) is not None
        ]
        if not items:
            continue
        heads_path = outputs / run.name / HEADLINES_FILE
        heads = json.loads(heads_path.read_text()) if heads_path.exists() else {}
        run_dir = outputs / run.name
        explorers = sorted((outputs / "explorer").glob("*.html"))
        runs.append(
            {
                "name": run.name,
                "description": run.profile.description,
                "simulated": run.profile.simulated,
                "provenance": read_provenance(run_dir),
                "tables": _files(run_dir, "tables", "*.csv"),
                "card": _card_with_verdicts(read_card(run_dir), verdicts),
                "card_href": f"{run.name}/{AGREEMENT_PAGE}.html",
                "figures": _files(run_dir, "figures", "*.png"),
                "explorers": [
                    f"explorer/{p.name}"
                    for p in explorers
                    if p.stem in {f"{run.profile.name}-{d}" for d in run.datasets}
                ],
                "notebooks": [
                    {
                        "name": r.notebook,
                        "href": f"{run.name}/{r.html.name}" if r.html else None,
                        "figure": (
                            f"{run.name}/{fig}"
                            if (fig := lead_figure(run_dir / r.html.name if r.html else None))
                            else None
                        ),
                        "ok": r.ok,
                        "seconds": r.seconds,
                        "error": r.error,
                        "headlines": [
                            _headline_html(h) for h in heads.get(r.notebook, {}).values()
                        ],
                    }
                    for r in items
                ],
            }
        )
    write_ledger_page(outputs, config, claims, simulated=any(r["simulated"] for r in runs))
    page = _ENV.get_template("index.html.j2").render(
        studies=other_studies(outputs, config),
        findings=findings(claims),
        key_claims=key_claims(claims),
        families=ledger.families(outputs, config),
        n_claims=len(claims),
        runs=runs,
        simulated=any(r["simulated"] for r in runs),
        quick=any((r["provenance"] or {}).get("quick") for r in runs),
        glossary=GLOSSARY,
        css=static_text("page.css"),
        js=static_text("tables.js"),
    )
    index = outputs / "index.html"
    index.write_text(page, encoding="utf-8")
    return index


def other_studies(outputs: Path, config: Config) -> list[dict[str, str]]:
    """The reports of other profiles found in folders of ``outputs`` (``make report``
    writes the demo's second study to ``outputs/posters/``), to link from this index."""
    found = []
    for manifest in sorted(Path(outputs).glob(f"*/{MANIFEST_NAME}")):
        folder = manifest.parent
        if not (folder / "index.html").exists():
            continue
        profile = read_manifest(manifest).profile
        described = config.profiles.get(profile)
        found.append(
            {
                "href": f"{folder.name}/index.html",
                "profile": profile,
                "description": described.description if described else "",
            }
        )
    return found


def _headline_html(h: dict[str, Any]) -> str:
    """A headline as the index shows it: its terms linked to the glossary and, when it
    quotes a ledger row, the row's words as that row's claim span (its lead-in stays text)."""
    if not h.get("claim"):
        return link_terms(str(h["text"]))
    text, lead = str(h["text"]), str(h.get("lead", ""))
    words = text[len(lead) :] if text.startswith(lead) else text
    cid = html.escape(str(h["claim"]))
    return (
        f"{link_terms(lead) if words is not text else ''}"
        f'<a class="jp-claim" data-claim="{cid}" '
        f'data-verdict="{html.escape(str(h.get("verdict", "")))}" '
        f'href="{ledger.LEDGER_PAGE}#{cid}">{html.escape(words)}</a>'
    )


def _card_with_verdicts(card: list[dict], verdicts: dict[str, str]) -> list[dict]:
    """The judge card's rows, each alt-test cell worded by its ledger row where it has one
    (the card file keeps the page's words; the index quotes the row)."""
    return [{**c, "alt_test": verdicts.get(str(c.get("claim", "")), c["alt_test"])} for c in card]


FOUND = (wording.BEATS, wording.FALLS_BELOW, PASSES)
"""Verdicts that report a finding; a non-inferiority row's ("not worse by more than m") and
a selection-adjusted leader's ("leads") count too."""
N_FINDINGS = (3, 6)
"""The fewest and most sentences the index opens with."""


def _found(row: Any) -> bool:
    v = str(row["verdict"])
    return v in FOUND or v == LEADS or v.startswith("not worse by more than")


def _tested(c: Claim) -> str:
    """What the row's test looked for, in words, for the key claims table."""
    if c.kind == "non-inferiority":
        return f"non-inferiority, margin {c.margin_text}"
    if c.kind == "alt-test":
        return "alternative annotator test"
    if c.kind == "best-of":
        return "leader, selection-adjusted"
    if c.kind == "count":
        return "count over a family"
    return {"greater": "a gain only", "less": "a loss only"}.get(c.alternative, "two-sided")


def _sentence(row: Any) -> str:
    """A ledger row stated as a sentence of the index, its words the row's claim span."""
    c = claim_of_row(row)
    said = c.words()
    return f"{html.escape(str(row['dataset']))}: " + ledger.claim_link(c, said, from_page=False)


def findings(claims: pd.DataFrame) -> list[str]:
    """The index's opening sentences, each a ledger row in its own words: per page, the
    row with the largest effect among those whose test found something (whatever its
    sign: a baseline that beats the judges counts), ordered by their decisive p; where
    fewer than three pages found anything, the pages' headline rows follow in report order."""
    if claims.empty:
        return []
    rows = claims[claims["kind"].fillna("difference") != "count"]
    rows = rows[rows["excluded"].fillna("").astype(str) == ""]
    found = rows[rows.apply(_found, axis=1)] if not rows.empty else rows
    picks: list[Any] = []
    if not found.empty:
        found = found.assign(
            _size=pd.to_numeric(found["estimate"], errors="coerce").abs(),
            _p=pd.to_numeric(found["q"], errors="coerce").fillna(
                pd.to_numeric(found["p"], errors="coerce")
            ),
        )
        best = found.sort_values(["_size"], ascending=False).groupby("page", sort=False).head(1)
        ordered = best.sort_values(["_p", "_size"], ascending=[True, False])
        picks = [r for _, r in ordered.iterrows()]
    picks = picks[: N_FINDINGS[1]]
    if len(picks) < N_FINDINGS[0]:
        taken = {str(r["id"]) for r in picks}
        heads = rows[(rows["role"] == "headline") & ~rows["id"].astype(str).isin(taken)]
        heads = heads[~heads["verdict"].isin([NOT_TESTED, wording.NOT_ESTIMABLE])]
        picks += [r for _, r in heads.head(N_FINDINGS[0] - len(picks)).iterrows()]
    return [_sentence(r) for r in picks]


def key_claims(claims: pd.DataFrame) -> list[dict[str, str]]:
    """The ledger's headline rows as the index shows them: what, estimate, interval, what
    the test looked for, its decisive p (q where corrected), verdict, and links."""
    rows = []
    for _, r in claims[claims["role"] == "headline"].iterrows():
        c = claim_of_row(r)
        est = c.estimate
        p = c.decisive_p
        what = (
            f"{r['a']}, over {r['b']} ({r['dataset']})"  # a count: what, over which family
            if c.kind == "count"
            else f"{r['a']} − {r['b']} ({r['dataset']}, {r['metric']})"
        )
        rows.append(
            {
                "id": str(r["id"]),
                "what": what,
                "estimate": wording.estimate(est, c.ci_low, c.ci_high)
                if not pd.isna(est) and c.kind != "count"
                else ("–" if c.kind == "count" else wording.NOT_ESTIMABLE),
                "tested": _tested(c),
                "q": "–" if pd.isna(p) else wording.p_value(p, name="q" if c.family else "p"),
                "verdict": str(r["verdict"]),
                "page": f"{r['page']}.html",
            }
        )
    return rows


def write_ledger_page(
    outputs: Path, config: Config, claims: pd.DataFrame, *, simulated: bool
) -> Path:
    """``outputs/claims.html``: the whole ledger, filterable, each row linking to its page."""
    page = _ENV.get_template("claims.html.j2").render(
        rows=ledger.ledger_rows(claims),
        headers=ledger.LEDGER_HEADERS,
        families=ledger.families(outputs, config),
        simulated=simulated,
        css=static_text("page.css"),
        js=static_text("tables.js"),
    )
    path = Path(outputs) / ledger.LEDGER_PAGE
    path.write_text(page, encoding="utf-8")
    return path
