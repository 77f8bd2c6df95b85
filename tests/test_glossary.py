"""Headlines read as sentences: short terms stand in brackets, and the index links them."""

from __future__ import annotations

import json
from pathlib import Path

from test_report import runs_file

from judgepanel.core.config import load_config
from judgepanel.report.glossary import GLOSSARY, link_terms, unbracketed_jargon
from judgepanel.report.index import NotebookResult, write_index

OLD = "vab: best direct judge aurora: TB-1 ap@1 0.418, pass^3 0.220; Top-1 ap@1 0.533"
PLAIN = (
    "eva: fusing the pre-declared families' holistic and rubric scores (H+P_gb) against the "
    "plain average of their holistic scores (panel mean): Δρ = -0.065 [-0.128, +0.002]"
)


def test_jargon_outside_brackets_is_found_and_bracketed_jargon_is_not() -> None:
    assert unbracketed_jargon(OLD) == ["TB-1", "ap@1", "pass^3", "Top-1", "ap@1"]
    assert unbracketed_jargon("eva: H+P_gb vs panel mean Δρ -0.065") == ["H+P_gb"]
    assert unbracketed_jargon(PLAIN) == []
    # symbols for numbers and plain phrases may stand anywhere
    assert unbracketed_jargon("the panel mean: Δρ = +0.1 (q = 0.2), ρ 0.4 [CI]") == []
    # a term inside a longer name is not the term
    assert unbracketed_jargon("the judge rank:basalt and TB-10 and xH+P_gbx") == []


def test_the_first_use_of_each_term_links_to_its_glossary_entry() -> None:
    html = link_terms(PLAIN + " (H+P_gb) <b>")
    assert html.count('href="#term-h-p-gb"') == 1  # the first use only
    assert '<a class="term" href="#term-panel-mean">panel mean</a>' in html
    assert '<a class="term" href="#term-delta-rho">Δρ</a>' in html
    assert "&lt;b&gt;" in html and "<b>" not in html  # the rest is escaped
    anchors = [t.anchor for t in GLOSSARY]
    assert len(set(anchors)) == len(anchors) and all(a != "term-" for a in anchors)


def test_the_index_links_headline_terms_to_the_glossary(tmp_path: Path) -> None:
    config = load_config(runs_file(tmp_path, tmp_path / "eva"))
    out = tmp_path / "outputs"
    (out / "r-a").mkdir(parents=True)
    (out / "r-a" / "00_scoring.html").write_text("<html></html>")
    (out / "r-a" / "headlines.json").write_text(
        json.dumps({"00_scoring": {"primary": {"value": -0.065, "text": PLAIN}}})
    )
    done = NotebookResult("r-a", "00_scoring", True, 1.0, out / "r-a" / "00_scoring.html")
    index = write_index(out, [done], config).read_text()
    assert '(<a class="term" href="#term-h-p-gb">H+P_gb</a>)' in index
    assert '<dt id="term-h-p-gb">H+P_gb</dt>' in index
    assert '<dt id="term-rho">ρ (rho)</dt>' in index


def test_the_pairwise_terms_link_and_bradley_terry_stands_in_brackets() -> None:
    said = "eva: a judge's comparisons (Bradley-Terry) on decided pairs, at equal calls per image"
    assert unbracketed_jargon(said) == []
    assert unbracketed_jargon("Bradley-Terry from comparisons") == ["Bradley-Terry"]
    html = link_terms(said + " with position consistency; adaptive pairs")
    for anchor in ("bradley-terry", "decided-pairs", "equal-calls-per-image",
                   "position-consistency", "adaptive-pairs"):  # fmt: skip
        assert f'href="#term-{anchor}"' in html
