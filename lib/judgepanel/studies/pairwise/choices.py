"""A judge's pairwise choices as a tidy table, and the Bradley-Terry scores they give.

Reads the store's rows (``core.frames.read_calls``), never an endpoint. One row per
answered call: the pair, the judge, the question (``holistic`` or a dimension), the order
asked and the image chosen (``a`` or ``b`` of the pair) and the slot it was shown in.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pandas as pd

from judgepanel.stats.bradley_terry import DEFAULT_ALPHA, fit_bradley_terry
from judgepanel.studies.pairwise.prompt import PAIR_CALL_TYPES
from judgepanel.studies.pairwise.sampling import HOLISTIC

CHOICE_COLUMNS = ("pair_id", "judge", "question", "order", "winner", "shown")


def choices_from_calls(calls: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """The ok pairwise answers among ``calls`` (a store frame) for the pairs of ``pairs``.

    Returns:
        ``pair_id``, ``judge``, ``question``, ``order``, ``winner`` (``a``/``b``),
        ``shown`` (``A``/``B``), ``image_a``, ``image_b``.
    """
    df = calls[calls["kind"].isin(list(PAIR_CALL_TYPES.values())) & (calls["status"] == "ok")]
    df = df[df["item"].isin(set(pairs["pair_id"]))]
    answers = [json.loads(p) for p in df["parsed"]]
    out = pd.DataFrame(
        {
            "pair_id": df["item"].to_numpy(),
            "judge": df["family"].to_numpy(),
            "question": np.where(
                df["kind"] == PAIR_CALL_TYPES["holistic"], HOLISTIC, df["dimension"]
            ),
            "order": df["repetition"].astype(int).to_numpy(),
            "winner": [a["winner"] for a in answers],
            "shown": [a["shown"] for a in answers],
        },
        columns=list(CHOICE_COLUMNS),
    )
    out = out.merge(pairs[["pair_id", "image_a", "image_b"]], on="pair_id", how="left")
    return out.sort_values(["judge", "question", "pair_id", "order"]).reset_index(drop=True)


def bradley_terry_scores(
    choices: pd.DataFrame, images: Sequence[str], *, alpha: float = DEFAULT_ALPHA
) -> pd.Series:
    """Bradley-Terry scores of ``images`` from ``choices`` (rows with ``image_a``,
    ``image_b`` and ``winner``; pooled as given), indexed by image id.

    An image in no comparison gets the penalty's 0 (its SE is the prior's).
    """
    ids = [str(i) for i in images]
    index = {image: k for k, image in enumerate(ids)}
    a = choices["image_a"].map(index).to_numpy(int)
    b = choices["image_b"].map(index).to_numpy(int)
    y = np.select([choices["winner"] == "a", choices["winner"] == "b"], [1.0, 0.0], 0.5)
    fit = fit_bradley_terry(len(ids), a, b, y, alpha=alpha)
    return pd.Series(fit.scores, index=pd.Index(ids, name="image_id"), name="bt")


def position_consistency(choices: pd.DataFrame) -> pd.DataFrame:
    """Per judge and question: the share of pairs asked in both orders whose two answers
    chose the same image, and the share of answers naming the first slot."""
    both = choices.pivot_table(
        index=["judge", "question", "pair_id"], columns="order", values="winner", aggfunc="first"
    )
    rows = []
    for (judge, question), g in both.groupby(level=["judge", "question"]):
        full = g.dropna()
        rows.append(
            {
                "judge": judge,
                "question": question,
                "pairs_both_orders": len(full),
                "consistent": float((full[0] == full[1]).mean()) if len(full) else np.nan,
            }
        )
    first = choices.groupby(["judge", "question"])["shown"].apply(lambda s: (s == "A").mean())
    out = pd.DataFrame(rows).set_index(["judge", "question"])
    out["first_slot"] = first
    return out.reset_index()
