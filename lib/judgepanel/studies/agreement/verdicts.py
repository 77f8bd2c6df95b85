"""The alternative annotator test's pass or fail as ledger claims.

The test passes a judge when at least half of the annotators' nulls (rho_human - rho_judge
>= epsilon) are rejected after Benjamini-Yekutieli at q. Sort the annotators by their BY
q-values: the judge passes exactly when the q of the annotator at rank ceil(m/2) (the
decisive annotator) is at most q. So the claim of a judge, "judge beats the annotators
within epsilon", takes:

* ``p``: that decisive q (the alt-test's own corrected p; NaN counts as 1, never rejected);
* ``estimate``: epsilon - (rho_human - rho_judge) of the decisive annotator, the margin by
  which the judge stays inside the allowance (positive: inside);
* the interval: that annotator's t interval of the same at level 1 - 2q, whose lower
  end is the one-sided 1 - q bound the alt-test's t-test uses;
* ``alternative`` ``greater``: the test only looks for a judge inside the allowance.

The claims of all judges (families and the panel mean) form one declared family, corrected
by Benjamini-Yekutieli too (the judges are tested on the same annotators): the ledger's
verdict "beats" is a pass that survives the correction over judges as well, so it can be
stricter than the alt-test's own ``passed``, never looser.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from judgepanel.stats.alt_test import AltTestResult
from judgepanel.stats.claims import Claim, Family, correct, slug

ALT_FAMILY = "alt-test/judges"


def alt_family(alpha: float = 0.05) -> Family:
    """The declared family of the judges' alt-test claims (BY over judges)."""
    return Family(
        ALT_FAMILY,
        "the alternative annotator test of every judge family and of the panel mean "
        "(Benjamini-Yekutieli over judges, on top of the test's own correction over "
        "annotators)",
        alpha=alpha,
        method="fdr_by",
    )


def decisive(result: AltTestResult) -> tuple[float, float, float, float]:
    """(p, estimate, ci_low, ci_high) of the decisive annotator (see the module docstring)."""
    table = result.per_annotator.assign(_q=result.per_annotator["q_by"].fillna(1.0))
    table = table.sort_values(["_q", "annotator"], kind="stable").reset_index(drop=True)
    row = table.iloc[math.ceil(len(table) / 2) - 1]
    mean_d = float(row["rho_human"] - row["rho_judge"])
    estimate = result.epsilon - mean_d
    t = float(row["t"])
    if np.isinf(t):
        se = 0.0
    elif np.isfinite(t) and t != 0.0:
        se = (mean_d - result.epsilon) / t
    else:
        se = math.nan
    crit = float(stats.t.ppf(1.0 - result.q, int(row["n_items"]) - 1))
    return float(row["_q"]), estimate, estimate - crit * se, estimate + crit * se


def alt_claims(
    results: dict[str, AltTestResult | str],
    *,
    dataset: str,
    family: Family,
    question: str = "",
    unit: str = "images",
) -> list[Claim]:
    """One claim per tested judge, corrected over the judges in ``family``.

    ``question`` names what was compared when it is not the holistic question (a
    dimension, or the pooled dimensions): it goes into each claim's id and scope, so the
    claims of several questions on one page stay apart in the ledger; ``unit`` is what the
    test's instances are (``image x dimension pairs`` when pooled).
    """
    out = []
    for name, res in results.items():
        if isinstance(res, str):
            continue
        p, est, low, high = decisive(res)
        out.append(
            Claim(
                id=f"alt-test-{slug(question)}-{slug(name)}"
                if question
                else f"alt-test-{slug(name)}",
                a=name,
                b=f"the annotators (ε = {res.epsilon:g})",
                dataset=dataset,
                scope=question,
                metric=f"alt-test {res.metric}",
                unit=unit,
                estimate=est,
                ci_low=low,
                ci_high=high,
                p=p,
                alternative="greater",
                family=family.name,
                alpha=family.alpha,
                symbol="ε − Δρ",
                note=(
                    f"the decisive annotator's ε − (ρ_human − ρ_judge), interval at "
                    f"{1 - 2 * res.q:.0%}; p its BY q over {res.n_annotators} annotators; "
                    f"{res.mapping}"
                ),
                extra={
                    "winning_rate": res.winning_rate,
                    "advantage_probability": res.advantage_probability,
                    "passed": res.passed,
                },
            )
        )
    return correct(out, {family.name: family})
