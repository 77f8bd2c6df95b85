"""The VAB study's claims: its correction families, declared before any result, and one
claim of the ledger (:mod:`judgepanel.claims.rows`) per row of its comparison tables.

Notebook 05 declares :func:`correction_families` right after its setup, then turns each
table into claims with the builders here and quotes them (``nb.claim``), so every verdict
it states, every count of verdicts and every ranking is read off one ledger row:

- a row's q comes from :func:`judgepanel.claims.rows.correct` over the rows of its family
  that test something; a row equal to another by construction (a ranker's pass^3, a pair
  listed twice, a TB-1 row on pairs alone) is an excluded claim, "not tested", with its
  reason, and takes no part in the correction;
- a count is "k of n with q < 0.05" over the tested rows (:func:`tally`), never a count of
  intervals that exclude zero;
- a leader is a ``best-of`` row (:func:`leader_claim`): "leads" only when a max-T test over
  every pair of judges, resampling tasks, clears its margin over the runner-up, else
  "highest by point estimate only", naming those no test separates it from;
- the primary comparison (:data:`PRIMARY`) is declared here, before any result: scoring then
  ranking against comparing directly, one model under both protocols, averaged over the
  pre-declared families (:func:`primary_table`), a family of one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from judgepanel.claims.rows import Claim, Family, correct, slug
from judgepanel.claims.rows import tally as tally
from judgepanel.stats import bh, grouped_ratios
from judgepanel.stats.means import mean_difference
from judgepanel.studies.common.leader import BestOf, best_of, best_of_claim
from judgepanel.studies.vab.rankers import ranker_name

ABOVE_CHANCE = "above-chance"
POSITION = "position"
VOTE = "vote"
OWN_PROTOCOL = "own-protocol"
LIKE_FOR_LIKE = "score-then-rank"
PRIMARY_ID = "primary"
PRIMARY = (
    "TB-1 ap@1 on the same tasks: scoring each image alone and ranking the scores minus "
    "asking for the comparison directly, one model under both protocols (each family's "
    "holistic-mean ranker against the same family asked directly), averaged over the "
    "pre-declared families; paired over tasks, two-sided, a family of one"
)
"""The primary comparison of notebook 05, declared before any result: neither side is
chosen on the VAB tasks (the families are the run's pre-declared panel)."""
UNIT = "tasks"
METRIC_NAMES = {"top1": "Top-1", "bot1": "Bot-1", "tb1": "TB-1"}
STAT_NAMES = {"ap1": "ap@1", "pass3": "pass^3"}
QUESTION_METRIC = {"vab_top1": "top1", "vab_bot1": "bot1", "vab_tb1": "tb1"}


def metric_name(metric: str, stat: str | None = None) -> str:
    """``TB-1 ap@1``: a prompt's metric, with the statistic when given."""
    name = METRIC_NAMES.get(metric, metric)
    return f"{name} {STAT_NAMES.get(stat, stat)}" if stat else name


def correction_families(*, rankers: bool = True, alpha: float = 0.05) -> list[Family]:
    """Notebook 05's correction families, declared before any result is computed.

    Each is Benjamini-Hochberg over the rows that test something, two-sided; ``rankers``
    adds the two families of score-then-rank (left out when the answers come from an
    imported results file, which has no per-image scores). The leaders' ``best-of`` rows
    and the primary comparison (:data:`PRIMARY`) are families of one, in no family here.
    """
    out = [
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
                OWN_PROTOCOL,
                "one model, two protocols: each family's holistic-mean ranker against the "
                "same family asked directly, Top-1 and TB-1 ap@1 (its pass^3 rows equal "
                "the ap@1 ones by construction and stay out)",
                alpha=alpha,
            ),
            Family(
                LIKE_FOR_LIKE,
                "the panel rankers on the same tasks: the panel mean and the fused panel "
                "against the direct judge first by point estimate, and the fused panel "
                "against the panel mean, Top-1 and TB-1 ap@1 (pass^3 rows, equal to ap@1 "
                "by construction for a ranker, stay out)",
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
    like-for-like table (``a − b``), in its order.

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
        metric = QUESTION_METRIC.get(r.kind, r.kind)
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


def like_for_like_claims(table: pd.DataFrame, *, dataset: str, alpha: float = 0.05) -> list[Claim]:
    """One claim per row of the like-for-like table, in its order: a family's ranker against
    the same family asked directly is in :data:`OWN_PROTOCOL`, every other pair in
    :data:`LIKE_FOR_LIKE`; each family's q is BH over its own tested rows."""
    own = [str(a) == ranker_name(str(b)) for a, b in zip(table["a"], table["b"], strict=True)]
    claims: list[Claim | None] = [None] * len(table)
    for family, keep in ((OWN_PROTOCOL, own), (LIKE_FOR_LIKE, [not x for x in own])):
        rows = [i for i, k in enumerate(keep) if k]
        built = pair_claims(
            table.iloc[rows], family=family, dataset=dataset, prefix="like-for-like", alpha=alpha
        )
        for i, c in zip(rows, built, strict=True):
            claims[i] = c
    return [c for c in claims if c is not None]


def leader_test(
    scores: pd.DataFrame,
    judges: Sequence[str],
    *,
    metric: str = "tb1",
    stat: str = "ap1",
    n_resamples: int = 10_000,
    seed: int = 0,
) -> BestOf:
    """The judge first by point estimate in ``metric`` ``stat`` among ``judges``, tested
    against all of them at once by a max-T over every pair, resampling the tasks all of
    them answered (:func:`judgepanel.studies.common.leader.best_of`)."""
    sub = scores.loc[(scores["metric"] == metric) & scores["judge"].isin(list(judges))]
    wide = sub.pivot_table(index="task_id", columns="judge", values=stat, aggfunc="first")
    names = [j for j in judges if j in wide.columns]
    wide = wide[names].dropna().sort_index()
    return best_of(wide.to_numpy(float), 1.0, names, n_resamples=n_resamples, seed=seed)


def leader_claim(
    result: BestOf,
    *,
    id: str,
    dataset: str,
    noun: str,
    nouns: str | None = None,
    metric: str = "tb1",
    stat: str = "ap1",
    alpha: float = 0.05,
) -> Claim:
    """The ``best-of`` row of a :func:`leader_test`: "leads" every other ``noun`` or is
    "highest by point estimate only", a family of one (its p is selection-adjusted)."""
    return best_of_claim(
        result, id=id, dataset=dataset, metric=metric_name(metric, stat), unit=UNIT,
        noun=noun, nouns=nouns, alpha=alpha,
    )  # fmt: skip


def primary_table(
    scores: pd.DataFrame,
    families: Sequence[str],
    *,
    n_resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """The primary comparison (:data:`PRIMARY`): per task, the mean over ``families`` (the
    pre-declared ones) of TB-1 ap@1 of the family's ranker minus that of the family asked
    directly, with a paired bootstrap over the tasks every side answered.

    Returns:
        One row: a, b, families, n_tasks, value_a, value_b, delta, ci_low, ci_high, p.
    """
    fams = list(families)
    if not fams:
        raise ValueError("the primary comparison needs at least one pre-declared family")
    sub = scores.loc[scores["metric"] == "tb1"]
    wide = sub.pivot_table(index="task_id", columns="judge", values="ap1", aggfunc="first")
    need = [*fams, *(ranker_name(f) for f in fams)]
    missing = [j for j in need if j not in wide.columns]
    if missing:
        raise ValueError(f"the primary comparison has no TB-1 scores for {missing}")
    wide = wide[need].dropna().sort_index()
    rank = wide[[ranker_name(f) for f in fams]].to_numpy(float).mean(axis=1)
    direct = wide[fams].to_numpy(float).mean(axis=1)
    diff = mean_difference(rank - direct, n_resamples=n_resamples, seed=seed,
                           confidence=confidence)  # fmt: skip
    return pd.DataFrame(
        [
            {
                "a": "scoring then ranking",
                "b": "comparing directly",
                "families": ", ".join(fams),
                "n_tasks": len(wide),
                "value_a": float(rank.mean()),
                "value_b": float(direct.mean()),
                **diff,
            }
        ]
    )


def primary_claim(table: pd.DataFrame, *, dataset: str, alpha: float = 0.05) -> Claim:
    """The ledger row of :func:`primary_table`: declared before the results, a family of
    one (its p decides), the row the page's headline quotes."""
    r = table.iloc[0]
    return Claim(
        id=PRIMARY_ID,
        a=f"scoring each image alone and ranking the scores ({r.value_a:.3f})",
        b=f"asking for the comparison directly ({r.value_b:.3f})",
        dataset=dataset,
        scope=f"one model under both protocols, averaged over {r.families}",
        metric=metric_name("tb1", "ap1"),
        unit=UNIT,
        estimate=float(r.delta),
        ci_low=float(r.ci_low),
        ci_high=float(r.ci_high),
        p=float(r.p),
        alpha=alpha,
        role="headline",
        note="the primary comparison, declared before any result",
    )


def as_headline(claims: Sequence[Claim], *chosen: Claim | None) -> list[Claim]:
    """``claims`` with those of ``chosen`` (matched by id; None and claims of another table
    are passed over) marked as headline rows: the comparisons a headline quotes, which the
    report's index opens with."""
    ids = {c.id for c in chosen if c is not None}
    return [replace(c, role="headline") if c.id in ids else c for c in claims]
