"""The claims ledger on disk and on the pages: one row per comparison, quoted by id."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from judgepanel.claims import wording
from judgepanel.claims.rows import Claim, Family, contradictions
from judgepanel.core.config import load_config
from judgepanel.report import ledger, nbtools
from judgepanel.report.index import write_index
from judgepanel.report.manifest import table_paths
from judgepanel.report.verdict_check import check_report

CLAIM_LINK = re.compile(
    r'<a class="jp-claim" data-claim="([^"]+)" data-verdict="([^"]+)"[^>]*>(.*?)</a>'
)


def _claim(**kw) -> Claim:
    base = dict(
        id="primary", a="H+P_gb", b="panel mean", dataset="eva", metric="spearman",
        unit="images", estimate=0.05, ci_low=0.01, ci_high=0.09, p=0.004,
        alternative="greater", symbol="Δρ",
    )  # fmt: skip
    base.update(kw)
    return Claim(**base)


def _runs_file(tmp: Path) -> Path:
    runs = {
        "profiles": {"p": {"description": "d", "simulated": True, "store": str(tmp / "s.sqlite"),
                           "datasets": {"a": {"kind": "eva", "root": str(tmp / "eva")}},
                           "families": {"aurora": "sim-aurora-v1"}}},
        "runs": {"r-a": {"profile": "p", "dataset": "a", "notebooks": ["02_input_ablation"]}},
    }  # fmt: skip
    path = tmp / "runs.yaml"
    path.write_text(yaml.safe_dump(runs))
    return path


def _page(tmp: Path) -> nbtools.Notebook:
    return nbtools.setup(
        run="r-a", name="02_input_ablation", tables_dir=tmp / "out" / "r-a" / "tables",
        simulated=True,
    )  # fmt: skip


def test_a_claim_is_recorded_once_and_linked_with_its_verdict(tmp_path: Path) -> None:
    nb = _page(tmp_path)
    nb.declare(Family("ablation", "the arms of the pre-declared block"))
    html = nb.claim(_claim(family="ablation", q=0.02, role="headline"), anchor="table2")
    m = CLAIM_LINK.search(html)
    assert m and m.group(1) == "r-a.02.primary" and m.group(2) == wording.BEATS
    assert m.group(3).startswith("H+P_gb beats panel mean")
    with pytest.raises(ValueError, match="recorded twice"):
        nb.claim(_claim(family="ablation", q=0.02))
    with pytest.raises(ValueError, match="did not declare"):
        nb.claim(_claim(id="other", family="later", q=0.02))
    with pytest.raises(ValueError, match="does not state its verdict"):
        nb.claim(_claim(id="worded"), text="H+P_gb is ahead of the panel mean")

    config = load_config(_runs_file(tmp_path))
    out = tmp_path / "out"
    frame = ledger.write_ledger(out, config)
    assert list(frame["id"]) == ["r-a.02.primary"]
    row = frame.iloc[0]
    assert row["family"] == "r-a.02.ablation" and row["page"] == "r-a/02_input_ablation"
    assert row["anchor"] == "table2" and row["verdict"] == wording.BEATS
    assert Path("claims.csv") in table_paths(out)  # the ledger is in the manifest
    assert json.loads((out / "claims.json").read_text())[0]["id"] == "r-a.02.primary"

    write_index(out, [], config)
    page = (out / "claims.html").read_text()
    assert 'id="r-a.02.primary"' in page and "r-a.02.ablation" in page
    index = (out / "index.html").read_text()
    assert "Key claims" in index and "claims.html#r-a.02.primary" in index
    # the glossary lists the families as the page declared them
    assert "Correction families" in index and "<dt>r-a.02.ablation</dt>" in index

    # the notebook executed again starts with none of its earlier claims
    _page(tmp_path)
    assert ledger.write_ledger(out, config).empty


def test_families_are_listed_with_their_rows_and_headlines_mark_key_claims(tmp_path: Path) -> None:
    nb = _page(tmp_path)
    nb.declare(Family("used", "two rows"), Family("unused", "a branch not taken"))
    nb.claim(_claim(id="one", family="used", q=0.02))
    nb.claim(_claim(id="two", b="best single", family="used", q=0.02, estimate=0.06))
    nb.claim(_claim(id="lone", b="sham", estimate=-0.01, ci_low=-0.05, p=0.6))
    nb.headline("h", 1.0, "on eva: ", claim="lone")
    config = load_config(_runs_file(tmp_path))
    out = tmp_path / "out"
    frame = ledger.write_ledger(out, config)
    fams = pd.read_csv(out / "claim_families.csv")
    assert list(fams["name"]) == ["r-a.02.used"]  # the unused family is not listed
    assert Path("claim_families.csv") in table_paths(out)
    roles = dict(zip(frame["id"], frame["role"].fillna(""), strict=True))
    assert roles == {"r-a.02.one": "", "r-a.02.two": "", "r-a.02.lone": "headline"}
    assert frame.set_index("id").loc["r-a.02.lone", "verdict"] == wording.NO_GAIN


def test_a_tables_rows_are_recorded_in_one_write_as_one_at_a_time_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table's claims go to the ledger file together: the rows and the family the
    single-claim path records, written once; a row worded in the page's own text keeps it."""
    rows = [_claim(id=f"c{i}", b=f"arm {i}", family="arms", q=0.02) for i in range(4)]
    text = {"c3": {"text": f"H+P_gb {wording.BEATS} arm 3 on this table"}}
    one_by_one = _page(tmp_path / "single")
    one_by_one.declare(Family("arms", "four arms"))
    for c in rows:
        one_by_one.claim(c, anchor="t", **text.get(c.id, {}))

    from judgepanel.report import jsonfile

    writes: list[Path] = []
    real = jsonfile.write_json
    monkeypatch.setattr(
        jsonfile, "write_json", lambda path, *a, **k: (writes.append(path), real(path, *a, **k))
    )
    nb = _page(tmp_path / "table")
    nb.declare(Family("arms", "four arms"))
    got = nb.claims_table(pd.DataFrame({"arm": range(4)}), rows, "t", words=text)
    assert writes == [tmp_path / "table" / "out" / "r-a" / ledger.CLAIMS_FILE]
    assert [c.id for c in got] == [f"r-a.02.c{i}" for i in range(4)]
    assert nb.quote("c3").endswith(f"H+P_gb {wording.BEATS} arm 3 on this table</a>")
    single = json.loads((tmp_path / "single" / "out" / "r-a" / ledger.CLAIMS_FILE).read_text())
    table = json.loads((tmp_path / "table" / "out" / "r-a" / ledger.CLAIMS_FILE).read_text())
    assert table == single and len(table["02_input_ablation"]["claims"]) == 4
    with pytest.raises(ValueError, match="recorded twice"):
        nb.claims_table(pd.DataFrame({"arm": [0]}), rows[:1], "t2")
    assert len(writes) == 1  # the refused table wrote nothing


def test_two_rows_of_one_comparison_cannot_disagree(tmp_path: Path) -> None:
    nb = _page(tmp_path)
    nb.claim(_claim(id="one"))
    nb.claim(_claim(id="two", p=0.2))  # the same comparison, another verdict
    with pytest.raises(ValueError, match="contradicts itself"):
        ledger.write_ledger(tmp_path / "out", load_config(_runs_file(tmp_path)))


def _ledger_and_links(report: Path) -> tuple[pd.DataFrame, list[tuple[Path, str, str, str]]]:
    frame = pd.read_csv(report / "claims.csv", keep_default_na=False)
    links = []
    for page in sorted(report.glob("*/*.html")):
        for m in CLAIM_LINK.finditer(page.read_text(encoding="utf-8")):
            links.append((page, m.group(1), m.group(2), m.group(3)))
    return frame, links


@pytest.mark.slow
def test_every_claim_on_every_page_is_its_ledger_row(small_report: Path) -> None:
    """The shared report: each linked verdict is the one its row carries, every row is
    shown on the page it names, and no two rows of one comparison disagree."""
    frame, links = _ledger_and_links(small_report)
    verdicts = dict(zip(frame["id"], frame["verdict"], strict=True))
    assert links, "no page quotes the ledger"
    for page, cid, verdict, text in links:
        where = page.relative_to(small_report)
        assert cid in verdicts, (where, cid)
        # the page escapes its attributes and text ("q &lt; 0.05" in a count row's verdict)
        verdict, text = html.unescape(verdict), html.unescape(text)
        assert verdict == verdicts[cid], (where, cid, verdict, verdicts[cid])
        assert verdicts[cid] in text, (where, cid, text)
    # every row is shown on the page it names: linked in a sentence, or in a table's cells
    for row in frame.itertuples():
        page = (small_report / f"{row.page}.html").read_text(encoding="utf-8")
        assert row.id in page, (row.page, row.id)
    assert contradictions(frame) == []
    # a page that names another page's comparison links that row, which must exist
    refs = {
        (page.relative_to(small_report), ref)
        for page in small_report.rglob("*.html")
        for ref in re.findall(r'data-claim-ref="([^"]+)"', page.read_text(encoding="utf-8"))
    }
    assert refs, "no page links a comparison another page owns"
    for where, ref in refs:
        assert html.unescape(ref) in verdicts, (where, ref)
    # the headline margins carry their spread over random fold partitions
    n = pd.to_numeric(frame["spread_n"]).fillna(0)
    spread = frame[n > 0]
    assert not spread.empty and (spread["role"] == "headline").any()
    low, high = (pd.to_numeric(spread[c]) for c in ("spread_p05", "spread_p95"))
    assert (low <= high).all()


@pytest.mark.slow
def test_the_small_report_states_every_verdict_through_a_row(small_report: Path) -> None:
    """Every page and the index of the shared report: no verdict word outside a ledger row,
    no float noise, and every family's q its own rows' correction (the check `judgepanel
    verify` runs on the quick report of both studies)."""
    assert (small_report / "claim_families.csv").exists()
    problems = check_report(small_report)
    assert problems == [], "\n".join(problems)
