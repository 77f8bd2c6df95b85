"""EVA's fourth attribute: do the distinctiveness and emotion prompts know what it rates?

The fusion paper (section 6) holds EVA's fourth rated attribute out of the multitrait-multimethod
table and uses it afterwards to validate the two dimension prompts that have no matched
attribute. The test is the MTMM one: the prompt's partial Spearman correlation with the
attribute given the human overall score, against the holistic prompt's, per family, with a
paired bootstrap and Benjamini-Hochberg q over the cells of this table.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from judgepanel.claims.rows import Claim, Family, slug
from judgepanel.stats import bh
from judgepanel.studies.fusion.mtmm import OVERALL, paired_partials

ATTRIBUTE = "semantic"
"""EVA's fourth attribute column (1-4), held out from the MTMM table."""

PROMPTS: tuple[str, ...] = ("distinctiveness", "emotion")
"""The dimension prompts without a matched human attribute."""


def fourth_attribute_cells(
    P: pd.DataFrame,
    H: pd.DataFrame,
    human: pd.DataFrame,
    families: Sequence[str],
    *,
    attribute: str = ATTRIBUTE,
    prompts: Sequence[str] = PROMPTS,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> pd.DataFrame:
    """One row per family and prompt: partials with ``attribute`` given the overall score.

    Args:
        P: dimension means, columns ``family:dimension``, indexed by image.
        H: holistic means, one column per family.
        human: per-image human means with ``mean_score`` and ``attribute``.
        families: families to test.

    Returns:
        family, prompt, attribute, partial_prompt, partial_holistic, delta (prompt minus
        holistic), ci_low, ci_high, p (one-sided: the prompt's partial is larger), q (BH
        over the table), validated (delta > 0 with q < 0.05), n.

    Raises:
        ValueError: ``human`` has no ``attribute`` column (the dataset does not rate it).
    """
    if attribute not in human.columns:
        raise ValueError(f"the human ratings have no {attribute!r} column")
    items = P.index.intersection(H.index).intersection(human[[OVERALL, attribute]].dropna().index)
    overall = human.loc[items, OVERALL].to_numpy(float)
    target = human.loc[items, attribute].to_numpy(float)
    pairs = {
        (fam, prompt): (
            P.loc[items, f"{fam}:{prompt}"].to_numpy(float),
            H.loc[items, fam].to_numpy(float),
        )
        for fam in families
        for prompt in prompts
    }
    results = paired_partials(target, pairs, overall, n_resamples, seed)
    rows = []
    for fam in families:
        for prompt in prompts:
            res = results[fam, prompt]
            rows.append(
                {
                    "family": fam,
                    "prompt": prompt,
                    "attribute": attribute,
                    "partial_prompt": res.estimate_a,
                    "partial_holistic": res.estimate_b,
                    "delta": res.delta,
                    "ci_low": res.ci_low,
                    "ci_high": res.ci_high,
                    "p": res.p,
                    "n": len(items),
                }
            )
    out = pd.DataFrame(rows)
    out["q"] = bh(out["p"].to_numpy())
    out["validated"] = (out["delta"] > 0) & (out["q"] < 0.05)
    return out


FAMILY = "fourth-attribute:cells"
"""The held-out attribute's family: every family × prompt cell of the table."""


def correction_family(alpha: float = 0.05) -> Family:
    """The cells' family, declared before they are computed (BH over the table's cells)."""
    return Family(
        FAMILY,
        f"01 held-out attribute ({ATTRIBUTE}): the {' and '.join(PROMPTS)} prompts' partial ρ "
        "against the holistic prompt's, per family, one-sided, BH over the cells",
        alpha=alpha,
    )


def cell_claims(cells: pd.DataFrame, *, dataset: str, alpha: float = 0.05) -> list[Claim]:
    """Every row of :func:`fourth_attribute_cells`'s table as a ledger row, in its order."""
    return [
        Claim(
            id=f"fourth:{slug(str(r['prompt']))}:{slug(str(r['family']))}",
            a=f"{r['family']}'s {r['prompt']} prompt",
            b=f"{r['family']}'s holistic prompt",
            dataset=dataset,
            scope=f"partial ρ with the human {r['attribute']} rating given the overall score",
            metric="partial_spearman",
            unit="images",
            estimate=float(r["delta"]),
            ci_low=float(r["ci_low"]),
            ci_high=float(r["ci_high"]),
            p=float(r["p"]),
            q=float(r["q"]),
            alternative="greater",
            family=FAMILY,
            alpha=alpha,
            symbol="Δ partial ρ",
        )
        for _, r in cells.iterrows()
    ]
