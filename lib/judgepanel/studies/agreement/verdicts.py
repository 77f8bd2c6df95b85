"""The alternative annotator test of each judge as a ledger row of kind ``alt-test``.

The test passes a judge when at least half of the annotators' nulls (rho_human - rho_judge
>= epsilon) are rejected after Benjamini-Yekutieli at q (winning rate >= 0.5). Sort the
annotators by their BY q-values: the judge passes exactly when the q of the annotator at
rank ceil(m/2) (the decisive annotator) is at most q. So the row of a judge takes:

* ``p``: that decisive q (the alt-test's own corrected p);
* ``q``: ``p`` corrected again over the judges of the row's family (Benjamini-Yekutieli:
  the judges are tested on the same annotators). The row passes when ``q`` < alpha, which
  can be stricter than the alt-test's own pass (``extra["passed"]``), never looser;
* ``estimate``: epsilon - (rho_human - rho_judge) of the decisive annotator, the margin by
  which the judge stays inside the allowance (positive: inside);
* the interval: that annotator's t interval of the same, at the level the row's ``q``
  implies (:func:`matched_interval`): its lower end is above zero exactly when ``q`` <
  alpha, so the interval and the decision rest on one basis; ``level`` says its coverage;
* ``extra``: the winning rate, the advantage probability, the test's own pass and
  ``rule``, the rule that decided in words (the correction over judges named at the rule).

A row that cannot enter a family is kept out of it and says why (``excluded``): a judge
whose decisive annotator's differences are constant at epsilon has no t-test (its row is
not estimable). Tests equal by construction are not made at all (the panel mean of one
family, the pool of one dimension: :mod:`judgepanel.studies.agreement.measures`). Two
distinct judges whose rows coincide (the win rates are shares of a few dozen images, so
ties happen) are two tests, and both stay in the family.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

from scipy import stats

from judgepanel.claims import wording
from judgepanel.claims.rows import Claim, Family, correct, slug
from judgepanel.stats.alt_test import AltTestResult

ALT_FAMILY = "alt-test/judges"


def alt_family(alpha: float = 0.05) -> Family:
    """The declared family of the judges' alt-test rows (BY over judges)."""
    return Family(
        ALT_FAMILY,
        "the alternative annotator test of every judge family and of the panel mean "
        "(Benjamini-Yekutieli over judges, on top of the test's own correction over "
        "annotators)",
        alpha=alpha,
        method="fdr_by",
    )


@dataclass(frozen=True)
class Decisive:
    """The decisive annotator's test: its BY q (``q_by``, NaN without a t-test: its
    differences are constant at ε), its raw
    one-sided p, the margin ε − Δρ and its standard error, and its degrees of freedom."""

    q_by: float
    p_raw: float
    estimate: float
    se: float
    df: int


def decisive_test(result: AltTestResult) -> Decisive:
    """The decisive annotator of ``result`` (see the module docstring); a NaN q ranks last."""
    table = result.per_annotator.assign(_q=result.per_annotator["q_by"].fillna(math.inf))
    table = table.sort_values(["_q", "annotator"], kind="stable").reset_index(drop=True)
    row = table.iloc[math.ceil(len(table) / 2) - 1]
    mean_d = float(row["rho_human"] - row["rho_judge"])
    se = float(row["se"])
    return Decisive(
        q_by=float(row["q_by"]),
        p_raw=float(row["p"]),
        estimate=result.epsilon - mean_d,
        se=se,
        df=int(row["n_items"]) - 1,
    )


def matched_interval(d: Decisive, q: float, alpha: float) -> tuple[float, float, float]:
    """(ci_low, ci_high, level): the decisive annotator's t interval of ε − Δρ at the level
    the row's decisive ``q`` implies, so its lower end is above zero exactly when q < alpha.

    ``q`` is the raw one-sided p times an effective multiplicity (q / p_raw, from the
    corrections over annotators and judges); the one-sided bound at 1 − alpha · p_raw / q
    is above zero exactly when p_raw < alpha · p_raw / q, that is when q < alpha. The
    interval is the two-sided one with that bound as its lower end.
    """
    if d.se == 0.0 or d.p_raw <= 0.0 or q <= 0.0:
        return d.estimate, d.estimate, 1.0 - 2.0 * alpha
    one_sided = alpha * min(1.0, d.p_raw / q)
    crit = float(stats.t.ppf(1.0 - one_sided, d.df))
    return d.estimate - crit * d.se, d.estimate + crit * d.se, 1.0 - 2.0 * one_sided


def rule_words(claim: Claim, n_judges: int, over: str, test_q: float) -> str:
    """The rule that decides a row, and what decided it, in words (ends with ``; ``)."""
    rate = float(claim.extra["winning_rate"])
    rule = (
        f"rule: winning rate ≥ 0.5 (a one-sided t-test per annotator, Benjamini–Yekutieli "
        f"over annotators at {test_q:g}) and q < {claim.alpha:g} after the Benjamini–Yekutieli "
        f"correction over the {n_judges} {over}, the interval at that q's level"
    )
    if rate < 0.5:
        why = (
            f"here the winning rate is below 0.5: the test's own rule decides, before any "
            f"correction over {over}"
        )
    elif claim.passes:
        why = f"here the winning rate is ≥ 0.5 and q < {claim.alpha:g}"
    else:
        why = (
            f"here the winning rate meets the test's own rule (≥ 0.5), but after the "
            f"correction over the {n_judges} {over} q = {wording.number(claim.q)} is not "
            f"below {claim.alpha:g}"
        )
    return f"{rule}; {why}; "


def section_claims(
    tests: Mapping[str, Mapping[str, AltTestResult | str]],
    *,
    dataset: str,
    family: Family,
    units: Mapping[str, str] | None = None,
    over: str = "judges",
) -> list[Claim]:
    """One ``alt-test`` row per tested judge of every question of ``tests`` (``""`` for the
    holistic question), corrected over them all in ``family``.

    ``units`` names what a question's instances are (``image × dimension pairs`` when
    pooled; ``images`` by default); ``over`` names the rows of the family in the rule's
    words ("judges", "judge and dimension tests"). A judge the test could not run on (a
    string in ``tests``) gets no row.
    """
    units = units or {}
    rows: list[tuple[Claim, Decisive]] = []
    for question, results in tests.items():
        for name, res in results.items():
            if isinstance(res, str):
                continue
            d = decisive_test(res)
            excluded = ""
            if math.isnan(d.q_by):
                excluded = (
                    "not estimable: the decisive annotator's win differences are constant "
                    f"at ε, so there is no t-test (winning rate {res.winning_rate:.2f}; the "
                    "test's own rule does not pass it)"
                )
            what = f"{question} " if question else ""
            claim = Claim(
                id=f"alt-test-{slug(question)}-{slug(name)}" if question
                else f"alt-test-{slug(name)}",
                a=name,
                b=f"the annotators (ε = {res.epsilon:g})",
                dataset=dataset,
                scope=question,
                metric=f"alt-test {res.metric}",
                unit=units.get(question, "images"),
                estimate=d.estimate,
                ci_low=math.nan,
                ci_high=math.nan,
                p=d.q_by,
                alternative="greater",
                family="" if excluded else family.name,
                alpha=family.alpha,
                kind="alt-test",
                excluded=excluded,
                symbol="ε − Δρ",
                note=(
                    f"the {what}test's decisive annotator (rank {math.ceil(res.n_annotators / 2)} "
                    f"of {res.n_annotators} by BY q): ε − (ρ_human − ρ_judge); p its BY q over "
                    f"the annotators; {res.mapping}"
                ),
                extra={
                    "winning_rate": res.winning_rate,
                    "advantage_probability": res.advantage_probability,
                    "passed": res.passed,
                    "test_q": res.q,
                },
            )  # fmt: skip
            rows.append((claim, d))
    corrected = correct([c for c, _ in rows], {family.name: family})
    n = sum(1 for c in corrected if c.family)
    out = []
    for c, (_, d) in zip(corrected, rows, strict=True):
        if c.excluded:
            out.append(c)
            continue
        low, high, level = matched_interval(d, c.q, c.alpha)
        c = replace(c, ci_low=low, ci_high=high, level=level)
        rule = rule_words(c, n, over, float(c.extra["test_q"]))
        out.append(replace(c, extra={**c.extra, "rule": rule}))
    return out


def alt_claims(
    results: Mapping[str, AltTestResult | str],
    *,
    dataset: str,
    family: Family,
    question: str = "",
    unit: str = "images",
) -> list[Claim]:
    """One row per tested judge of one question, corrected over the judges in ``family``
    (:func:`section_claims` of that question alone)."""
    return section_claims({question: results}, dataset=dataset, family=family,
                          units={question: unit})  # fmt: skip


def count_passes(id: str, claims: list[Claim], family: str, *, what: str, over: str) -> Claim:
    """The row "k of n with q < alpha" counting the rows of ``family`` that pass.

    :func:`judgepanel.claims.rows.count_claim` counts "beats" or "falls below"; an
    alt-test row passes instead, so its count is built here. ``point`` counts the rows
    whose estimate alone is inside the allowance (ε − Δρ > 0 at the decisive annotator).
    """
    inside = [c for c in claims if c.family == family and not c.excluded]
    if not inside:
        raise ValueError(f"count {id!r}: no row of family {family!r} to count")
    first = inside[0]
    k = sum(c.passes for c in inside)
    point = sum(c.estimate > 0 for c in inside)
    return Claim(
        id=id, a=what, b=over, scope=family, dataset=first.dataset, metric=first.metric,
        unit=first.unit, estimate=float(k), ci_low=math.nan, ci_high=math.nan, kind="count",
        alpha=first.alpha, extra={"n": len(inside), "point": point},
    )  # fmt: skip


def closest_to_passing(claims: list[Claim]) -> Claim | None:
    """Among the tested rows, the one with the smallest q (then the highest winning rate):
    the row nearest its family's threshold, chosen by the decisive statistic."""
    tested = [c for c in claims if not c.excluded and not math.isnan(c.decisive_p)]
    if not tested:
        return None
    return min(tested, key=lambda c: (c.decisive_p, -float(c.extra["winning_rate"]), c.id))
