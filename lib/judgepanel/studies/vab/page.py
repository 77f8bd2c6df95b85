"""What the VAB page (notebook 05) computes between its tables and its sentences.

The page keeps the call that makes each table and figure and the sentences that read them;
these helpers do the work it repeats: reading the answers (from the store or from the
official harness's files), a leader tested against all the others, the score-then-rank
judges, the words of a table's ledger rows and the rows its sentences quote.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from judgepanel.claims.rows import Claim
from judgepanel.core.config import Config, Run, ScoringDesign
from judgepanel.core.frames import score_table
from judgepanel.core.rubric import load_rubric
from judgepanel.studies.common.leader import BestOf
from judgepanel.studies.vab.accuracy import accuracy_table
from judgepanel.studies.vab.imports import load_predictions
from judgepanel.studies.vab.rankers import (
    FUSED,
    PANEL,
    ScoreThenRank,
    like_for_like_pairs,
    rank_vs_direct,
    ranker_name,
    score_then_rank,
)
from judgepanel.studies.vab.run import load_run, load_training_world
from judgepanel.studies.vab.scores import task_scores
from judgepanel.studies.vab.summary import (
    add_vote_costs,
    answer_costs,
    calls_per_task,
    ranker_table,
)
from judgepanel.studies.vab.verdicts import (
    METRIC_NAMES,
    as_headline,
    leader_claim,
    leader_test,
    like_for_like_claims,
    primary_claim,
    primary_table,
)
from judgepanel.studies.vab.vote import vote_table


@dataclass(frozen=True)
class VabAnswers:
    """The comparison answers a page reads.

    Attributes:
        predictions: one row per comparison call (planned calls included).
        tasks: the tasks they answer.
        families: the judges, in the page's order.
        design: the scoring design of the set images' rubric calls (None: imported).
        calls: every stored call of the dataset (None: answers imported from the harness).
    """

    predictions: pd.DataFrame
    tasks: pd.DataFrame
    families: list[str]
    design: ScoringDesign | None = None
    calls: pd.DataFrame | None = None

    @property
    def imported(self) -> bool:
        """Whether the answers come from the official harness's files, not the store."""
        return self.calls is None


def read_answers(
    run: Run,
    config: Config,
    *,
    families: Sequence[str],
    n_orders: int,
    seed: int,
    predictions: Sequence[str] | None = None,
    judge: str | None = None,
) -> VabAnswers:
    """The run's answers: from the files of ``predictions`` (the official harness's results,
    ``judge`` picking one of their models) when given, else from the store.

    Imported answers name their own judges, in the files' order; the store's are those of
    ``families``.
    """
    if predictions:
        pred, tasks = load_predictions(predictions, judge=judge)
        return VabAnswers(pred, tasks, list(dict.fromkeys(pred["judge"])))
    data = load_run(run, config, families=list(families), n_orders=n_orders, seed=seed)
    return VabAnswers(data.predictions, data.tasks, list(families), data.design, data.calls)


def leader(
    scores: pd.DataFrame,
    judges: Sequence[str],
    *,
    id: str,
    dataset: str,
    noun: str,
    nouns: str | None = None,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> tuple[BestOf, Claim]:
    """The judge first in TB-1 ap@1 tested against every other at once (max-T over the
    pairs, tasks resampled), and its ``best-of`` ledger row, marked as a headline row."""
    test = leader_test(scores, judges, n_resamples=n_resamples, seed=seed)
    claim = leader_claim(test, id=id, dataset=dataset, noun=noun, nouns=nouns)
    return test, as_headline([claim], claim)[0]


def pass3_kept(acc: pd.DataFrame, metric: str = "tb1") -> pd.Series:
    """Per judge, the share of its ``metric`` ap@1 that its pass^3 keeps: what survives a
    change of order (NaN where ap@1 is zero).

    Args:
        acc: :func:`~judgepanel.studies.vab.summary.accuracy_wide` rows.
    """
    rows = acc.loc[acc["metric"] == metric].set_index("judge")
    return (rows["pass3"] / rows["ap1"]).replace([float("inf"), -float("inf")], float("nan"))


def degradation_rows(degradation: pd.DataFrame, metric: str, stat: str) -> pd.DataFrame:
    """One metric and stat's rows of a size-degradation table, indexed by judge; empty when
    the tasks lack pairs or sets of four or more (as in a harness's file of a few tasks).

    Args:
        degradation: :func:`~judgepanel.studies.vab.accuracy.size_degradation` rows.
    """
    keep = degradation["metric"].eq(metric) & degradation["stat"].eq(stat)
    return degradation.loc[keep].drop(columns=["metric", "stat"]).set_index("judge")


@dataclass(frozen=True)
class Rankers:
    """The score-then-rank judges of a page.

    Attributes:
        panel: the pre-declared families the panel mean and the fused panel use.
        ranked: the rankers' predictions, ties and fitted fused panel.
        scores: their per-task scores (:func:`~judgepanel.studies.vab.scores.task_scores`).
        table: their accuracy, ties and calls per task (``table_vab_rankers``).
        calls: calls per task of every direct judge and ranker.
    """

    panel: list[str]
    ranked: ScoreThenRank
    scores: pd.DataFrame
    table: pd.DataFrame
    calls: pd.Series


def rankers(
    run: Run,
    config: Config,
    answers: VabAnswers,
    *,
    predeclared: Sequence[str],
    fusion_train: str,
    repetitions: Sequence[int],
    n_resamples: int = 10_000,
    seed: int = 0,
) -> Rankers:
    """Every score-then-rank judge on the answers' tasks: each family's holistic mean, the
    panel mean of the pre-declared families (all families when none of them is read) and
    the fused panel trained on the scoring world ``fusion_train`` (never on a VAB label).

    Raises:
        ValueError: the answers were imported (only the store has the images' scores).
    """
    if answers.imported or answers.design is None:
        raise ValueError("score-then-rank needs the images' rubric scores from the store")
    families, design = answers.families, answers.design
    panel = [f for f in predeclared if f in families] or families
    rubric_sha = load_rubric(run.rubric).sha256
    train_scores, train_human = load_training_world(
        run, config, fusion_train, families=panel, rubric_sha=rubric_sha
    )
    image_scores = score_table(
        answers.calls,
        run.dataset,
        families=families,
        rubric_sha=rubric_sha,
        temperature=design.temperature,
    )
    ranked = score_then_rank(
        image_scores,
        answers.tasks,
        families=families,
        panel=panel,
        train_scores=train_scores,
        train_target=train_human,
        train_dataset=fusion_train,
        repetitions=repetitions,
        seed=seed,
    )
    scores = task_scores(ranked.predictions, answers.tasks, repetitions=repetitions)
    acc = accuracy_table(scores, n_resamples=n_resamples, seed=seed)
    calls = calls_per_task(
        [*families, *ranked.rankers],
        answers.tasks,
        holistic_k=design.holistic_k,
        dimension_r=design.dimension_r,
        panel_size=len(panel),
    )
    return Rankers(panel, ranked, scores, ranker_table(acc, ranked.ties, calls), calls)


def side_words(table: pd.DataFrame, claims: Sequence[Claim]) -> dict[str, dict[str, str]]:
    """Each row's ledger words naming its two judges with their values, ``rank:a (0.412)``
    (``table``: ``value_a`` and ``value_b`` per row, in the claims' order)."""
    return {
        c.id: {"a": f"{c.a} ({r.value_a:.3f})", "b": f"{c.b} ({r.value_b:.3f})"}
        for c, r in zip(claims, table.itertuples(), strict=True)
    }


def claim_of(table: pd.DataFrame, claims: Sequence[Claim], **values: object) -> Claim:
    """The claim of the one row of ``table`` whose columns hold ``values`` (``claims``: one
    per row, in order), e.g. ``claim_of(votes, claims, judge="a", metric="tb1")``.

    Raises:
        KeyError: no row, or more than one, holds them.
    """
    match = pd.Series(True, index=table.index)
    for column, value in values.items():
        match &= table[column] == value
    at = [i for i, hit in enumerate(match.to_numpy()) if hit]
    if len(at) != 1:
        raise KeyError(f"{len(at)} rows hold {values}, not one")
    return list(claims)[at[0]]


def own_protocol(
    table: pd.DataFrame, claims: Sequence[Claim], metric: str, stat: str = "ap1"
) -> list[Claim]:
    """The rows of each family's ranker against the same family asked directly, in the
    table's order."""
    return [
        c
        for c, r in zip(claims, table.itertuples(), strict=True)
        if r.a == ranker_name(r.b) and r.metric == metric and r.stat == stat
    ]


def forest_rows(table: pd.DataFrame, stat: str = "ap1") -> pd.DataFrame:
    """The ``stat`` rows of a score-then-rank table as a forest plot draws them: labelled
    ``a − b · TB-1``, TB-1 first, then by first judge."""
    rows = table.loc[table["stat"] == stat].copy()
    rows["label"] = rows["a"] + " − " + rows["b"] + " · " + rows["metric"].map(METRIC_NAMES)
    return rows.sort_values(["metric", "a"], ascending=[False, True])


def position_words(pos: pd.DataFrame, claims: Sequence[Claim]) -> dict[str, dict[str, str]]:
    """Each slot row's ledger words: the judge's share of picks in the slot against the
    position-blind share."""
    return {
        c.id: {
            "a": f"{r.judge}'s share of {r.field} picks "
            f"({METRIC_NAMES[r.kind.removeprefix('vab_')]}) in the {r.slot} slot ({r.picked:.0%})",
            "b": f"the position-blind share ({r.expected:.0%})",
        }
        for c, (_, r) in zip(claims, pos.iterrows(), strict=True)
    }


@dataclass(frozen=True)
class SlotPulls:
    """The slot rows a page quotes, from the tested Top-1 best-pick rows.

    Attributes:
        claims: every row's claim, the largest pull marked as a headline row.
        strongest: each judge's largest departure from position-blind, by point estimate.
        pull: the largest of those (the headline's selection).
        first_lowest, first_highest: the first slot's smallest and largest excess.
    """

    claims: list[Claim]
    strongest: list[Claim]
    pull: Claim
    first_lowest: Claim
    first_highest: Claim


def slot_pulls(pos: pd.DataFrame, claims: Sequence[Claim]) -> SlotPulls:
    """The quoted rows of a :func:`~judgepanel.studies.vab.position.position_table` with its
    claims (one per row, in order). Only tested rows count: a middle-slot or mirrored row is
    fixed by the others."""
    top = pos.loc[(pos["kind"] == "vab_top1") & (pos["field"] == "best") & (pos["excluded"] == "")]
    strongest = top.loc[top.groupby("judge")["delta"].apply(lambda s: s.abs().idxmax())]
    pull_at = strongest["delta"].abs().idxmax()
    marked = as_headline(claims, claims[pos.index.get_loc(pull_at)])
    of = dict(zip(pos.index, marked, strict=True))
    first = top.loc[top["slot"] == "first", "delta"]
    return SlotPulls(
        marked,
        [of[i] for i in strongest.index],
        of[pull_at],
        of[first.idxmin()],
        of[first.idxmax()],
    )


def votes(
    answers: VabAnswers,
    *,
    repetitions: Sequence[int],
    n_resamples: int = 10_000,
    seed: int = 0,
) -> pd.DataFrame:
    """The vote over the standard orders against a single ask
    (:func:`~judgepanel.studies.vab.vote.vote_table`), with each side's calls and recorded
    spend per task when the answers come from the store."""
    table = vote_table(
        answers.predictions,
        answers.tasks,
        repetitions=repetitions,
        n_resamples=n_resamples,
        seed=seed,
    )
    if answers.imported:
        return table
    costs = answer_costs(
        answers.calls, answers.tasks, families=answers.families, repetitions=repetitions
    )
    return add_vote_costs(table, costs)


def domain_leaders(by_domain: pd.DataFrame, metric: str = "tb1") -> tuple[pd.Series, pd.DataFrame]:
    """Per domain, the families' mean ``metric`` ap@1 (lowest first) and the row of the
    family first by point estimate (indexed by domain).

    Args:
        by_domain: :func:`~judgepanel.studies.vab.summary.accuracy_wide` rows by domain.
    """
    rows = by_domain.loc[by_domain["metric"] == metric]
    means = rows.groupby("domain")["ap1"].mean().sort_values()
    return means, rows.loc[rows.groupby("domain")["ap1"].idxmax()].set_index("domain")


@dataclass(frozen=True)
class RankComparisons:
    """The score-then-rank judges against the direct ones, as the page's tables show them.

    Attributes:
        primary_table, primary: the primary comparison (:data:`~judgepanel.studies.vab.
            verdicts.PRIMARY`) and its ledger row.
        versus, versus_claims: every like-for-like pair, each row's ``family`` and ``q``
            those of its ledger row, and the rows.
        leader, leader_claim: the ranker first in TB-1 ap@1 tested against the others.
    """

    primary_table: pd.DataFrame
    primary: Claim
    versus: pd.DataFrame
    versus_claims: list[Claim]
    leader: BestOf
    leader_claim: Claim


def compare_rankers(
    scores: pd.DataFrame,
    rank: Rankers,
    *,
    families: Sequence[str],
    best_direct: str,
    dataset: str,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> RankComparisons:
    """The primary comparison (neither side chosen on VAB), the like-for-like pairs (each
    family's ranker against itself asked directly, the panels against ``best_direct`` and
    the fused panel against the panel mean) and the leading ranker, on the same tasks."""
    resampling = {"n_resamples": n_resamples, "seed": seed}
    both = pd.concat([scores, rank.scores], ignore_index=True)
    primary = primary_table(both, rank.panel, **resampling)
    pairs = [
        *like_for_like_pairs(families, rank.ranked.rankers, best_direct=best_direct),
        (FUSED, PANEL),
    ]
    versus = rank_vs_direct(both, pairs, **resampling)
    claims = like_for_like_claims(versus, dataset=dataset)
    # each row's q is that of its own family (own-protocol or score-then-rank)
    versus = versus.assign(family=[c.family for c in claims], q=[c.q for c in claims])
    test, lead = leader(
        rank.scores,
        rank.ranked.rankers,
        id="leader:ranker",
        dataset=dataset,
        noun="ranker",
        **resampling,
    )
    return RankComparisons(
        primary, primary_claim(primary, dataset=dataset), versus, claims, test, lead
    )
