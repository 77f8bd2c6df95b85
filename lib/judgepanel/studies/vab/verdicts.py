"""The VAB study's claims: its correction families, declared before any result, and one
claim of the ledger (:mod:`judgepanel.stats.claims`) per row of its comparison tables.

Notebook 05 declares :func:`correction_families` right after its setup, then turns each
table into claims with the builders here and quotes them (``nb.claim``), so every verdict
it states, every count of verdicts and every ranking is read off one ledger row:

- a row's q comes from :func:`judgepanel.stats.claims.correct` over the rows of its family
  that test something; a row equal to another by construction (a ranker's pass^3, a pair
  listed twice, a TB-1 row on pairs alone) is an excluded claim, "not tested", with its
  reason, and takes no part in the correction;
- a count is "k of n with q < 0.05" over the tested rows (:func:`tally`), never a count of
  intervals that exclude zero;
- a leader is named alone only when its claim against every rival is "beats"
  (:func:`separated`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from judgepanel.stats import bh, grouped_ratios
from judgepanel.stats.claims import Claim, Family, correct, slug
from judgepanel.stats.claims import tally as tally
from judgepanel.stats.claims import with_verdicts as with_verdicts
from judgepanel.stats.wording import BEATS, FALLS_BELOW

DIRECT_LEADER = "direct-leader"
ABOVE_CHANCE = "above-chance"
POSITION = "position"
VOTE = "vote"
RANK_LEADER = "rank-leader"
LIKE_FOR_LIKE = "score-then-rank"
UNIT = "tasks"
METRIC_NAMES = {"top1": "Top-1", "bot1": "Bot-1", "tb1": "TB-1"}
STAT_NAMES = {"ap1": "ap@1", "pass3": "pass^3"}
KIND_METRIC = {"vab_top1": "top1", "vab_bot1": "bot1", "vab_tb1": "tb1"}


def metric_name(metric: str, stat: str | None = None) -> str:
    """``TB-1 ap@1``: a prompt's metric, with the statistic when given."""
    name = METRIC_NAMES.get(metric, metric)
    return f"{name} {STAT_NAMES.get(stat, stat)}" if stat else name


def correction_families(*, rankers: bool = True, alpha: float = 0.05) -> list[Family]:
    """Notebook 05's correction families, declared before any result is computed.

    Each is Benjamini-Hochberg over the rows of one table that test something, two-sided;
    ``rankers`` adds the two families of score-then-rank (left out when the answers come
    from an imported results file, which has no per-image scores).
    """
    out = [
        Family(
            DIRECT_LEADER,
            "TB-1 ap@1: the direct judge first by point estimate against each other family, "
            "paired over tasks",
            alpha=alpha,
        ),
        Family(
            ABOVE_CHANCE,
            "ap@1 of each family and prompt against the chance level of its tasks, paired "
            "over tasks",
            alpha=alpha,
        ),
        Family(
            POSITION,
            "the share of picks shown in the first, middle and last slot against a "
            "position-blind judge, per family, prompt and answer field",
            alpha=alpha,
        ),
        Family(
            VOTE,
            "the majority vote over the standard orders against one ask, per family and prompt",
            alpha=alpha,
        ),
    ]
    if rankers:
        out += [
            Family(
                RANK_LEADER,
                "TB-1 ap@1: the ranker first by point estimate against each other ranker not "
                "compared in the like-for-like table",
                alpha=alpha,
            ),
            Family(
                LIKE_FOR_LIKE,
                "like for like on the same tasks: each ranker against the judge it is "
                "compared with, Top-1 and TB-1, ap@1 and pass^3; rows equal to another by "
                "construction (a ranker's pass^3, a repeated pair) left out",
                alpha=alpha,
            ),
        ]
    return out


def _reason(value: object) -> str:
    return value if isinstance(value, str) else ""


def _corrected(claims: list[Claim], family: str, alpha: float) -> list[Claim]:
    return correct(claims, {family: Family(family, family, alpha=alpha)})


def pair_claims(
    table: pd.DataFrame,
    *,
    family: str,
    dataset: str,
    prefix: str,
    scope: str = "",
    alpha: float = 0.05,
) -> list[Claim]:
    """One claim per row of a :func:`~judgepanel.studies.vab.rankers.rank_vs_direct` or
    :func:`~judgepanel.studies.vab.rankers.separate_leader` table (``a − b``), in its order.

    A row with a reason in ``excluded`` is an excluded claim, outside every family; the
    others are corrected over ``family`` (their q is BH over the tested rows alone).
    """
    claims = []
    for r in table.itertuples(index=False):
        reason = _reason(getattr(r, "excluded", ""))
        claims.append(
            Claim(
                id=f"{prefix}:{slug(r.a)}-vs-{slug(r.b)}:{r.metric}-{r.stat}",
                a=str(r.a),
                b=str(r.b),
                dataset=dataset,
                scope=scope,
                metric=metric_name(r.metric, r.stat),
                unit=UNIT,
                estimate=float(r.delta),
                ci_low=float(r.ci_low),
                ci_high=float(r.ci_high),
                p=float(r.p),
                family="" if reason else family,
                alpha=alpha,
                excluded=reason,
            )
        )
    return _corrected(claims, family, alpha)


def chance_table(
    scores: pd.DataFrame, *, n_resamples: int = 2000, seed: int = 0, confidence: float = 0.95
) -> pd.DataFrame:
    """ap@1 of each judge and prompt against chance, paired over tasks.

    A task's chance level is fixed by its set size (``chance_ap1``), so the difference is
    the mean over tasks of ap@1 minus chance, resampled by task with the same draws as the
    accuracy table's interval of that judge and prompt (one group key, one seed).

    Returns:
        judge, metric, n_tasks, ap1, chance, delta (ap1 − chance), ci_low, ci_high, p
        (two-sided bootstrap over tasks), q (BH over the table's rows).
    """
    frame = scores.assign(excess=scores["ap1"] - scores["chance_ap1"])
    table = grouped_ratios(
        frame,
        ["judge", "metric"],
        "task_id",
        "excess",
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
        p_value=True,
        extra={"ap1": ("ap1", _mean), "chance": ("chance_ap1", _mean)},
    )
    out = pd.DataFrame(
        {
            "judge": table["judge"],
            "metric": table["metric"],
            "n_tasks": table["n"],
            "ap1": table["ap1"],
            "chance": table["chance"],
            "delta": table["estimate"],
            "ci_low": table["ci_low"],
            "ci_high": table["ci_high"],
            "p": table["p"],
        }
    )
    out["q"] = _bh(out["p"])
    return out


def _mean(values: np.ndarray) -> float:
    return float(np.mean(values))


def _bh(p: pd.Series) -> np.ndarray:
    return bh(p.to_numpy(float)) if len(p) else np.array([])


def chance_claims(table: pd.DataFrame, *, dataset: str, alpha: float = 0.05) -> list[Claim]:
    """One claim per row of :func:`chance_table`: a judge's ap@1 against chance."""
    claims = [
        Claim(
            id=f"chance:{slug(r.judge)}:{r.metric}-ap1",
            a=str(r.judge),
            b="chance",
            dataset=dataset,
            metric=metric_name(r.metric, "ap1"),
            unit=UNIT,
            estimate=float(r.delta),
            ci_low=float(r.ci_low),
            ci_high=float(r.ci_high),
            p=float(r.p),
            family=ABOVE_CHANCE,
            alpha=alpha,
        )
        for r in table.itertuples(index=False)
    ]
    return _corrected(claims, ABOVE_CHANCE, alpha)


def position_claims(
    table: pd.DataFrame, *, dataset: str, orders: str, alpha: float = 0.05
) -> list[Claim]:
    """One claim per row of the position table: the share of a judge's picks of one field
    that land in one slot class, against a position-blind judge's, in points."""
    claims = []
    for r in table.itertuples(index=False):
        reason = _reason(getattr(r, "excluded", ""))
        metric = KIND_METRIC.get(r.kind, r.kind)
        claims.append(
            Claim(
                id=f"position:{slug(r.judge)}:{metric}-{r.field}:{r.slot}",
                a=str(r.judge),
                b="a position-blind judge",
                dataset=dataset,
                scope=f"{metric_name(metric)} {r.field} picks, {r.slot} slot, {orders} orders",
                metric="share of picks",
                unit=UNIT,
                estimate=float(r.delta),
                ci_low=float(r.ci_low),
                ci_high=float(r.ci_high),
                p=float(r.p),
                family="" if reason else POSITION,
                alpha=alpha,
                excluded=reason,
                in_points=True,
            )
        )
    return _corrected(claims, POSITION, alpha)


def vote_claims(table: pd.DataFrame, *, dataset: str, alpha: float = 0.05) -> list[Claim]:
    """One claim per row of the vote table: the majority over the orders against one ask."""
    claims = []
    for r in table.itertuples(index=False):
        reason = _reason(getattr(r, "excluded", ""))
        claims.append(
            Claim(
                id=f"vote:{slug(r.judge)}:{r.metric}",
                a=f"{r.judge}, majority vote over {int(r.calls_vote)} orders",
                b=f"{r.judge}, one ask",
                dataset=dataset,
                metric=f"{metric_name(r.metric)} accuracy",
                unit=UNIT,
                estimate=float(r.delta),
                ci_low=float(r.ci_low),
                ci_high=float(r.ci_high),
                p=float(r.p),
                family="" if reason else VOTE,
                alpha=alpha,
                excluded=reason,
            )
        )
    return _corrected(claims, VOTE, alpha)


def versus(claims: Iterable[Claim], x: str, y: str) -> Claim | None:
    """The tested claim comparing ``x`` with ``y`` (in either order), or None."""
    for c in claims:
        if not c.excluded and {c.a, c.b} == {x, y}:
            return c
    return None


def separated(order: Sequence[str], claims: Iterable[Claim]) -> list[bool]:
    """For each runner-up of ``order`` (leader first), whether a tested claim puts the
    leader ahead of it: the leader "beats" it (named first) or it "falls below" the
    leader (named first). A runner-up no tested claim compares is not separated."""
    claims = list(claims)
    lead = order[0]
    out = []
    for rival in order[1:]:
        c = versus(claims, lead, rival)
        out.append(
            c is not None
            and ((c.a == lead and c.verdict == BEATS) or (c.b == lead and c.verdict == FALLS_BELOW))
        )
    return out


def quoted_rival(order: Sequence[str], separated_from: Sequence[bool]) -> str:
    """The runner-up a headline about the leader quotes: the first not separated from it
    (so a tie is shown by its row), else the runner-up by point estimate."""
    if len(order) < 2:
        raise ValueError("a leader needs a rival to be compared with")
    tied = [r for r, s in zip(order[1:], separated_from, strict=True) if not s]
    return tied[0] if tied else order[1]


def as_headline(claims: Sequence[Claim], *chosen: Claim | None) -> list[Claim]:
    """``claims`` with those of ``chosen`` (matched by id; None and claims of another table
    are passed over) marked as headline rows: the comparisons a headline quotes, which the
    report's index opens with."""
    ids = {c.id for c in chosen if c is not None}
    return [replace(c, role="headline") if c.id in ids else c for c in claims]
