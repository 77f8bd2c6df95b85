"""The agreement page's helpers (notebook 10): the alt-test's tables per section, the judges
it could not test, the words of its rows and its figure, on small hand-made results."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pandas as pd
import pytest

from judgepanel.claims.rows import Family
from judgepanel.stats.alt_test import AltTestResult
from judgepanel.studies import agreement
from judgepanel.studies.agreement import page

FAMILY = Family("alt", "the judges", method="fdr_by")


def _result(rho_judge: float, q_by: float, n_annotators: int = 4) -> AltTestResult:
    """A test whose every annotator has the same judge agreement and BY q."""
    table = pd.DataFrame(
        {
            "annotator": [f"r{j}" for j in range(n_annotators)],
            "n_items": 40,
            "rho_judge": rho_judge,
            "rho_human": rho_judge + 0.02,
            "t": -3.0,
            "se": 0.01,
            "p": q_by / 2,
            "q_by": q_by,
            "rejected": q_by < 0.05,
        }
    )
    rate = float(table["rejected"].mean())
    return AltTestResult(
        rate, rho_judge, rate >= 0.5, 0.1, "neg_rmse", 0.05, "none", 40, n_annotators, (), table
    )


def test_the_dimension_family_is_by_at_the_page_level():
    family = page.dimension_family(0.1)
    assert family.name == page.DIMENSION_FAMILY and family.alpha == 0.1
    assert family.method == "fdr_by" and "pooled over them" in family.description


def test_a_section_table_keeps_one_verdict_and_names_the_untested():
    sections = {
        "colour": {"a": _result(0.7, 0.01), "b": "too few images", "panel mean": "one family"},
        page.POOLED: {"a": _result(0.6, 0.2), "b": "too few images"},
    }
    table = page.sections_table(sections)
    assert list(table.columns[:2]) == ["dimension", "judge"] and "passed" not in table
    assert list(table["dimension"]) == ["colour"] * 3 + [page.POOLED] * 2
    tested = list(table["judge"] == "a")
    assert page.untested_judges(table, tested) == [
        "b on colour (too few images)",
        "panel mean on colour (one family)",
        f"b on {page.POOLED} (too few images)",
    ]


def test_every_judge_of_a_section_untested_is_said_once():
    table = page.sections_table({"light": {"a": "no raters", "b": "no raters"}})
    assert page.untested_judges(table, [False, False]) == ["every judge on light (no raters)"]


def test_judge_words_and_the_figure_follow_the_rows():
    results = {"a": _result(0.7, 0.01), "b": _result(0.4, 0.3)}
    claims = agreement.alt_claims(results, dataset="d", family=FAMILY)
    words = page.judge_words(claims)
    assert words[claims[0].id] == {"a": "a (advantage probability 0.700)"}
    alt = page.tested_table(results)
    assert "passed" not in alt and alt["adv_ci_low"].le(alt["advantage_probability"]).all()
    fig = page.alt_test_figure(alt, claims, 0.1)
    left, right = fig.axes
    assert [t.get_text() for t in left.get_yticklabels()] == ["a", "b"]
    assert right.get_legend().get_texts()[0].get_text() == "ε = 0.1"
    assert right.lines[-1].get_xdata()[0] == pytest.approx(0.1)
