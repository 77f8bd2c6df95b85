"""Rotation voting: one debiased VisionQ answer per question, from all its rotations.

A vote over the rotations of a question's panels removes a judge's pull toward a display
slot; :func:`rotation_debiasing` weighs what it gains against a single call, and what it
costs in calls.
"""

from __future__ import annotations

import hashlib

import pandas as pd

from judgepanel.stats import grouped_ratios
from judgepanel.stats.grouped import iter_groups
from judgepanel.studies.visionq.accuracy import accuracy_table
from judgepanel.studies.visionq.columns import QUESTION_COLUMNS
from judgepanel.studies.visionq.position import position_bias
from judgepanel.studies.visionq.predictions import check_predictions, judge_keys


def _vote(votes: list[tuple[int, str | None]], tie_key: str) -> tuple[str | None, bool]:
    """Majority letter over (rotation, letter) votes; ties broken by a seeded draw."""
    parsed = [p for _, p in votes if p is not None]
    if not parsed:
        return None, False
    counts: dict[str, int] = {}
    for letter in parsed:
        counts[letter] = counts.get(letter, 0) + 1
    best = max(counts.values())
    top = sorted(letter for letter, c in counts.items() if c == best)
    if len(top) == 1:
        return top[0], False
    digest = hashlib.sha256(tie_key.encode("utf-8")).digest()
    return top[int.from_bytes(digest[:8], "big") % len(top)], True


def rotation_vote(preds: pd.DataFrame, *, seed: int = 0) -> pd.DataFrame:
    """One debiased answer per judge and question: the majority over its rotations.

    Tie rule: a tie is broken uniformly among the tied letters by a draw fixed by
    (``seed``, judge, question id). A fixed rule such as "the released order wins" would
    hand ties (every split 2-choice vote) back to one display slot and so keep the very
    position bias the vote is meant to remove. Unparsed rotations abstain; a question
    with no parsed rotation gets a null prediction (incorrect).

    Returns:
        A predictions table (rotation 0, i.e. scored in the released labelling) with
        ``k`` (rotations asked), ``n_votes`` (parsed rotations) and ``tie``.
    """
    frame = check_predictions(preds)
    if "rotation" not in frame.columns:
        raise ValueError("rotation voting needs a rotation column")
    keys = [*judge_keys(frame), "id"]
    meta = list(QUESTION_COLUMNS)
    grouped: dict[tuple, list[tuple[int, str | None]]] = {}
    first: dict[tuple, tuple] = {}
    cols = [*keys, "rotation", "pred", *meta]
    for rec in frame[cols].itertuples(index=False, name=None):
        key = rec[: len(keys)]
        grouped.setdefault(key, []).append((int(rec[len(keys)]), rec[len(keys) + 1]))
        first.setdefault(key, rec[len(keys) + 2 :])
    rows = []
    for key, votes in grouped.items():
        tie_key = "\x1f".join([str(seed), *(str(v) for v in key)])
        letter, tie = _vote(votes, tie_key)
        rows.append(
            {
                **dict(zip(keys, key, strict=True)),
                "pred": letter,
                **dict(zip(meta, first[key], strict=True)),
                "rotation": 0,
                "k": len({r for r, _ in votes}),
                "n_votes": sum(p is not None for _, p in votes),
                "tie": tie,
            }
        )
    out = pd.DataFrame(rows)
    return out.sort_values(keys, kind="stable").reset_index(drop=True)


def rotation_debiasing(
    preds: pd.DataFrame, *, n_resamples: int = 2000, seed: int = 0, confidence: float = 0.95
) -> pd.DataFrame:
    """Single call (rotation 0) vs the majority vote over all rotations, per judge.

    Only questions asked at rotation 0 enter, so both protocols cover the same
    questions. For each judge, three rows (``protocol``): ``single`` (rotation 0),
    ``rotation_mean`` (every rotation scored as its own call, averaged) and ``vote``
    (:func:`rotation_vote`; ``seed`` also fixes its tie draws). ``rotation_mean`` counts
    every answer, so its ``n`` is the number of calls, not of questions.

    Returns:
        judge, protocol, n, calls (answers paid for), calls_per_question (calls over the
        questions asked at rotation 0: the cost against one call each), accuracy, ci_low,
        ci_high (paper bootstrap), last_excess, tv, chi2_p (letter shares against the gold
        shares, questions counted as independent; for reference), fit_p (the same fit with
        papers resampled: :func:`~judgepanel.studies.visionq.position.letter_fit_p`), and
        for ``vote`` the paired difference to ``single``: delta, delta_ci_low,
        delta_ci_high (the judge's paper resamples, as for its accuracies).
    """
    frame = check_predictions(preds)
    if "rotation" not in frame.columns:
        raise ValueError("rotation debiasing needs a rotation column")
    vote_all = rotation_vote(frame, seed=seed)
    boot = {"n_resamples": n_resamples, "seed": seed, "confidence": confidence}
    rows = []
    for labels, sub in iter_groups(frame, judge_keys(frame)):
        asked = set(sub.loc[sub["rotation"] == 0, "id"])
        sub = sub[sub["id"].isin(asked)]
        single = sub[sub["rotation"] == 0]
        votes = vote_all
        for col, val in labels.items():
            votes = votes[votes[col] == val]
        votes = votes[votes["id"].isin(asked)]
        for protocol, table, calls in (
            ("single", single, len(single)),
            ("rotation_mean", sub, len(sub)),
            ("vote", votes, int(votes["k"].sum()) if len(votes) else 0),
        ):
            acc = accuracy_table(table, rotation=None, **boot).iloc[0]
            bias = position_bias(table, rotation=None, **boot).iloc[0]
            rows.append(
                {
                    **labels,
                    "protocol": protocol,
                    "n": int(acc["n"]),
                    "calls": calls,
                    "calls_per_question": calls / len(single) if len(single) else float("nan"),
                    "accuracy": acc["accuracy"],
                    "ci_low": acc["ci_low"],
                    "ci_high": acc["ci_high"],
                    "last_excess": bias["last_excess"],
                    "tv": bias["tv"],
                    "chi2_p": bias["chi2_p"],
                    "fit_p": bias["fit_p"],
                }
            )
        s = single.set_index("id")["correct"]
        v = check_predictions(votes).set_index("id")
        diff = v["correct"].astype(float) - s.reindex(v.index).astype(float)
        paired = pd.DataFrame(
            {"paper": v["paper"].astype(str).to_numpy(), "diff": diff.to_numpy()}
        ).assign(**labels)
        delta = grouped_ratios(paired, list(labels), "paper", "diff", **boot).iloc[0]
        rows[-1].update(
            {"delta": delta.estimate, "delta_ci_low": delta.ci_low, "delta_ci_high": delta.ci_high}
        )
    return pd.DataFrame(rows)
