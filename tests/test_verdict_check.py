"""The check that a page states verdicts only inside ledger rows, and the rows of new kinds."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from judgepanel.claims.rows import (
    Claim,
    Family,
    claim_of_row,
    correct,
    count_claim,
    family_problems,
)
from judgepanel.report import ledger
from judgepanel.report.index import findings, key_claims
from judgepanel.report.verdict_check import float_noise, stray_verdicts, verdict_sentences


def _claim(**kw):
    base = dict(id="x", a="A", b="B", dataset="d", metric="spearman", unit="images",
                estimate=0.1, ci_low=0.05, ci_high=0.2, p=0.01)  # fmt: skip
    return Claim(**{**base, **kw})


def test_a_verdict_outside_a_claim_span_is_found_with_its_sentence():
    link = ledger.claim_link(_claim(), "A beats B (Δ = +0.1)")
    page = (
        f"<p>On d, {link}. Aurora leads the panel.</p>"
        "<table><tr><td>tied</td></tr></table>"  # a table of the page is read as prose
        "<div class='jp-table'><table><tr><td>beats</td></tr></table></div>"  # a data table
        "<dl class='glossary'><dt>beats</dt></dl><pre>x beats y</pre>"
    )
    found = stray_verdicts(page, "p.html")
    assert [s.word for s in found] == ["leads", "tied"]
    assert "Aurora leads the panel." in found[0].sentence
    assert verdict_sentences(page) == (1, 2)


def test_descriptive_names_are_not_verdicts():
    text = "<p>Against the best single model, ρ = 0.41. This leads to a second fit.</p>"
    assert stray_verdicts(text) == []
    assert stray_verdicts("<p>The best family reaches 40% of the ceiling.</p>")
    assert stray_verdicts("<p>H beats P in 3 of 9 trios with q < 0.05.</p>")


def test_negative_zero_and_float_noise_are_found():
    assert float_noise("<p>Δ = −0.000 here.</p>")
    assert float_noise("<p>a share of 0.30000000000000004.</p>")
    assert float_noise("<p>Δ = −0.012 and 0.5.</p>") == []


def test_rows_are_worded_by_their_kind():
    ni = _claim(kind="non-inferiority", margin=0.02, alternative="greater", estimate=0.006,
                ci_low=-0.004, ci_high=0.016, p=0.001)  # fmt: skip
    assert ni.verdict == "not worse by more than 0.02"
    assert ni.verdict in ni.words()
    wide = _claim(kind="non-inferiority", margin=0.02, alternative="greater", estimate=0.0,
                  ci_low=-0.05, ci_high=0.05, p=0.2)  # fmt: skip
    assert wide.verdict == "a loss of 0.02 not ruled out"
    alt = _claim(kind="alt-test", alternative="greater", p=0.3, extra={"winning_rate": 0.4})
    assert alt.verdict == "does not pass" and "winning rate 0.40" in alt.words()
    best = _claim(kind="best-of", p=0.2)
    assert best.verdict == "highest by point estimate only"
    with pytest.raises(ValueError, match="margin"):
        _claim(kind="non-inferiority", alternative="greater")


def test_a_count_is_a_row_of_its_own_naming_its_family():
    fam = Family("f", "the rows")
    rows = correct(
        [_claim(id=f"r{i}", p=p, family="f", alternative="greater") for i, p in
         enumerate([0.001, 0.002, 0.5])],
        {"f": fam},
    )  # fmt: skip
    c = count_claim("n", rows, "f", what="gains", over="the 3 rows")
    assert c.verdict == "2 of 3 with q < 0.05" and c.scope == "f" and not c.family
    assert c.verdict in c.words()


def test_families_are_checked_against_their_own_rows():
    fam = Family("f", "the rows")
    rows = correct([_claim(id=f"r{i}", p=p, family="f") for i, p in
                    enumerate([0.01, 0.02, 0.3])], {"f": fam})  # fmt: skip
    frame = pd.DataFrame([r.as_row() for r in rows])
    declared = [{"name": "f", "alpha": 0.05, "method": "fdr_bh"},
                {"name": "empty", "alpha": 0.05, "method": "fdr_bh"}]  # fmt: skip
    assert family_problems(frame, declared) == ["family empty: declared, but no row is in it"]
    frame.loc[0, "q"] = 0.5
    assert any("q is not" in p for p in family_problems(frame, declared[:1]))
    twice = pd.concat([frame.iloc[[1]], frame.iloc[[1]]]).assign(q=math.nan)
    twice["q"] = [0.02, 0.02]
    assert any("twice" in p for p in family_problems(twice, declared[:1]))
    # two tests of other sides whose numbers tie by chance are not one comparison twice
    tie = twice.assign(a=["aurora", "dune"])
    assert family_problems(tie, declared[:1]) == []
    # one judge on two dimensions whose numbers tie
    assert family_problems(twice.assign(scope=["quality", "colour"]), declared[:1]) == []


def test_a_ledger_row_read_back_says_the_same():
    c = _claim(alternative="greater", family="")
    row = {k: (math.nan if v is None else v) for k, v in c.as_row().items()}
    assert claim_of_row(row).words() == c.words()


def _ledger(rows: list[Claim]) -> pd.DataFrame:
    frame = pd.DataFrame([c.as_row() for c in rows])
    return frame.reindex(columns=list(ledger.COLUMNS))


def test_the_index_opens_with_findings_from_rows_of_any_sign():

    rows = [
        _claim(id="r.02.gain", page="r/02", estimate=0.05, ci_low=0.01, ci_high=0.09, p=0.01),
        # a baseline beating the judges is a finding too, and the larger effect of its page
        _claim(id="r.02.loss", page="r/02", estimate=-0.2, ci_low=-0.3, ci_high=-0.1, p=0.02),
        _claim(
            id="r.05.none",
            page="r/05",
            estimate=0.3,
            ci_low=-0.1,
            ci_high=0.6,
            p=0.4,
            role="headline",
        ),
        _claim(
            id="r.04.ni",
            page="r/04",
            kind="non-inferiority",
            margin=0.02,
            alternative="greater",
            estimate=0.0,
            ci_low=-0.01,
            ci_high=0.01,
            p=0.001,
        ),
    ]
    said = findings(_ledger(rows))
    ids = [s.split('data-claim="')[1].split('"')[0] for s in said]
    # one row per page that found something, by p; then a headline row to reach three
    assert ids == ["r.04.ni", "r.02.loss", "r.05.none"]
    assert all('class="jp-claim"' in s for s in said)
    assert "falls below" in said[1] and "not worse by more than 0.02" in said[0]
    assert stray_verdicts("<ul>" + "".join(f"<li>{s}</li>" for s in said) + "</ul>") == []
    (key,) = key_claims(_ledger(rows))
    assert (key["tested"], key["q"], key["verdict"]) == ("two-sided", "p = 0.400",
                                                         "no detectable difference")  # fmt: skip


def test_a_picked_leader_behind_its_comparator_is_not_called_highest():
    behind = _claim(kind="best-of", alternative="greater", estimate=-0.006, ci_low=-0.08,
                    ci_high=0.07, p=0.95)  # fmt: skip
    assert behind.verdict == "no detectable gain"
    assert "highest" not in behind.words() and "selection-adjusted" in behind.words()
    ahead = _claim(kind="best-of", alternative="greater", estimate=0.02, ci_low=-0.03,
                   ci_high=0.07, p=0.4)  # fmt: skip
    assert ahead.verdict == "highest by point estimate only"
    assert _claim(kind="best-of", alternative="greater", p=0.001).verdict == "leads"


def test_a_count_among_the_key_claims_names_what_it_counts_over_its_family():
    fam = [_claim(id=f"r.03.t{i}", b=f"B{i}", family="r.03.f", q=0.01 * (i + 1)) for i in range(3)]
    count = count_claim("r.03.n", fam, "r.03.f", what="trios where fusion beats",
                        over="the trios of eva", role="headline")  # fmt: skip
    (key,) = key_claims(_ledger([*fam, count]))
    assert key["what"] == "trios where fusion beats, over the trios of eva (d)"
    assert (key["estimate"], key["tested"], key["verdict"]) == (
        "–",
        "count over a family",
        "3 of 3 with q < 0.05",
    )
