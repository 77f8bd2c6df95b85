"""The judge card: one compact row per judge family for the report's index.

Notebook 10 shows the card as its table ``judge_card`` (``tables/judge_card.csv``); the
index reads that file as it is and recomputes nothing. Cost per 1,000 images is the
store's recorded cost of the dataset's rubric calls (holistic and dimension; the price
basis the calls were billed at) divided by the images they cover; it is empty, not known,
for a judge whose answers were imported (they carry no price), never 0.00:
:data:`CARD_MISSING` says so where the card is shown.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from judgepanel.claims.rows import Claim
from judgepanel.core.coverage import UNPRICED_NOTE
from judgepanel.studies.agreement.data import AgreementData

CARD_TABLE = "judge_card"
CARD_FILE = f"{CARD_TABLE}.csv"
CARD_MISSING = UNPRICED_NOTE
"""The card's note for an empty cell (``nb.table(..., missing=CARD_MISSING)``): the cost of
imported answers is not known."""
COLUMNS = (
    "dataset",
    "judge",
    "qwk",
    "alpha",
    "repeatability",
    "alt_test",
    "claim",
    "usd_per_1000",
)


def card_rows(
    data: AgreementData,
    agreement: pd.DataFrame,
    repeat: pd.DataFrame,
    verdicts: dict[str, tuple[Claim, str]],
) -> pd.DataFrame:
    """One row per family: QWK, alpha, repeatability (alpha over repetitions), the alt-test
    as its ledger row words it (``alt_test``: the row's verdict, "passes", "does not pass" or
    "not tested", or why the test was not run), the row's full ledger id (``claim``, for the
    index to link the verdict to its row), and USD per 1,000 images as billed (NaN, not
    known, for a judge with imported answers).

    Args:
        verdicts: judge -> (its recorded claim, its full ledger id).
    """
    est = agreement.pivot(index="family", columns="metric", values="estimate")
    rep = repeat.set_index("family")
    rows = []
    for family in data.families:
        claim, ledger_id = verdicts.get(family, (None, ""))
        if claim is None:
            outcome = "not run: no rater ids" if data.reason else "not run"
        else:
            outcome = claim.verdict
        cost = data.cost.loc[family] if family in data.cost.index else None
        rows.append(
            {
                "dataset": data.dataset,
                "judge": family,
                "qwk": float(est.loc[family, "qwk"]),
                "alpha": float(est.loc[family, "alpha_interval"]),
                "repeatability": float(rep.loc[family].get("alpha", float("nan"))),
                "alt_test": outcome,
                "claim": ledger_id,
                "usd_per_1000": (
                    float(cost["usd"] / cost["n_images"] * 1000)
                    if cost is not None and pd.notna(cost["usd"])
                    else None
                ),
            }
        )
    return pd.DataFrame(rows, columns=list(COLUMNS))


def read_card(run_dir: Path) -> list[dict]:
    """The card of a run's outputs folder as rows (empty when notebook 10 wrote none)."""
    path = Path(run_dir) / "tables" / CARD_FILE
    if not path.exists():
        return []
    return pd.read_csv(path, keep_default_na=False).to_dict("records")
