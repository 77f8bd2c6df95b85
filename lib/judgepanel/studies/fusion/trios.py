"""The trio sweep (the fusion paper, section 5.4): every three-family panel, so no panel is chosen.

With five families there are ten trios. For each, the dimension-and-verdict combiner
(H+P_gb, out of fold on the fixed partition) is compared with the trio's best member (its
family with the highest raw holistic rho) and with its panel mean, by paired bootstrap.
Every arm of every trio is resampled on the same images (one seed), so rows of the table
are paired with each other too; q-values are Benjamini-Hochberg within each comparator and
metric of one dataset. The GB fits dominate the cost; ``n_jobs`` workers share them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd

from judgepanel.claims.rows import Claim, Family, slug
from judgepanel.stats import add_q, paired_bootstrap
from judgepanel.studies.common.combiners import FOLD_SEED, gb_combiner, oof_predict_many
from judgepanel.studies.fusion import ablation
from judgepanel.studies.fusion.blocks import Blocks, best_single, canonical, hp_design, panel_mean
from judgepanel.studies.fusion.compare import METRICS, compare_pairs, gain_claim

COMPARATORS: tuple[str, ...] = ("best member", "panel mean")


def trios_of(families: Sequence[str], size: int = 3) -> list[tuple[str, ...]]:
    """Every ``size``-family panel of ``families``, in the order of ``families``."""
    if len(families) < size:
        raise ValueError(f"need at least {size} families for a trio sweep, got {list(families)}")
    return list(combinations(families, size))


def trio_label(trio: Sequence[str]) -> str:
    """``aurora+basalt+cobalt``: how a trio is named in tables."""
    return "+".join(trio)


def fit_trios(
    blocks: Blocks,
    trios: Sequence[Sequence[str]],
    *,
    fold_seed: int = FOLD_SEED,
    n_jobs: int | None = None,
) -> dict[tuple[str, ...], np.ndarray]:
    """Out-of-fold H+P_gb predictions of every trio, the trios shared by ``n_jobs`` workers.

    Each trio's combiner sees that trio's holistic means and dimension means only, on the
    fold partition ``KFold(5, shuffle=True, random_state=fold_seed)``.
    """
    preds = oof_predict_many(
        [(gb_combiner(), hp_design(blocks, t), blocks.y, fold_seed) for t in trios],
        n_jobs=n_jobs,
    )
    return {tuple(t): p for t, p in zip(trios, preds, strict=True)}


def sweep_trios(
    blocks: Blocks,
    families: Sequence[str],
    *,
    fused: Mapping[tuple[str, ...], np.ndarray] | None = None,
    metrics: Sequence[str] = METRICS,
    n_resamples: int = 10_000,
    seed: int = 0,
    fold_seed: int = FOLD_SEED,
    n_jobs: int | None = None,
    owned: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Every trio's H+P_gb against its best member and its panel mean (long form).

    Args:
        blocks: the dataset's feature blocks.
        families: the families to draw trios from (five give ten trios).
        fused: precomputed H+P_gb predictions by trio (from :func:`fit_trios`); fitted here
            when None.
        metrics: ``spearman`` and/or ``kendall_b``.
        n_resamples: bootstrap resamples over images, shared by every arm.
        seed: resampling seed.
        fold_seed: seed of the fold partition.
        n_jobs: joblib workers for the fits (None: one).
        owned: the pre-declared families: their trio's comparisons are Table 2's (notebook
            02 tests them in its pre-declared block), so they carry ``owner`` and 02's row
            id in ``owner_claim`` and stay out of the correction here.

    Returns:
        One row per (trio, comparator, metric): ``trio``, ``families``, ``best_member``,
        ``comparator``, ``metric``, ``value`` (the fused arm), ``comparator_value``,
        ``delta``, ``ci_low``, ``ci_high``, ``p`` (one-sided: fusion is better), ``n``,
        ``owner``, ``owner_claim`` and ``q`` (BH within comparator and metric, over the
        trios not owned by 02).
    """
    trios = trios_of(families)
    if fused is None:
        fused = fit_trios(blocks, trios, fold_seed=fold_seed, n_jobs=n_jobs)
    best = {t: best_single(blocks.H_of(t), blocks.y)[0] for t in trios}
    arms: dict[str, np.ndarray] = {}
    pairs: list[tuple[str, str]] = []
    labels: dict[tuple[str, str], dict[str, str]] = {}
    for t in trios:
        label = trio_label(t)
        fused_arm, panel_arm, single_arm = f"fused:{label}", f"panel:{label}", f"single:{best[t]}"
        arms[fused_arm] = np.asarray(fused[tuple(t)], float)
        arms[panel_arm] = panel_mean(blocks.H_of(t)).to_numpy(float)
        arms[single_arm] = blocks.H[best[t]].to_numpy(float)
        for comparator, other in (("best member", single_arm), ("panel mean", panel_arm)):
            pairs.append((fused_arm, other))
            labels[fused_arm, other] = {
                "trio": label,
                "families": ", ".join(t),
                "best_member": best[t],
                "comparator": comparator,
            }
    res = compare_pairs(
        blocks.y.to_numpy(float),
        arms,
        pairs,
        metrics=metrics,
        n_resamples=n_resamples,
        seed=seed,
        alternative="greater",
    )
    keys = pd.DataFrame([labels[pair] for pair in zip(res["arm"], res["comparator"], strict=True)])
    out = pd.concat([keys, res.drop(columns=["arm", "comparator"])], axis=1)
    is_owned = out["families"].map(lambda f: owned is not None and set(f.split(", ")) == set(owned))
    out["owner"] = np.where(is_owned, ablation.OWNER, "")
    out["owner_claim"] = [
        ablation.claim_id(PREDECLARED_BLOCK, "H+P_gb", TABLE2_NAME[c], m) if o else ""
        for c, m, o in zip(out["comparator"], out["metric"], is_owned, strict=True)
    ]
    out["q"] = np.nan
    own = ~is_owned
    out.loc[own, "q"] = add_q(out[own], by=["comparator", "metric"])["q"]
    return out


PREDECLARED_BLOCK = "pre-declared"
"""Table 2's block of the pre-declared families (notebook 02)."""
TABLE2_NAME = {"best member": "best single", "panel mean": "panel mean"}
"""What Table 2 calls each comparator of the sweep (a trio's best member is its best single)."""


def family_name(comparator: str, metric: str) -> str:
    """The sweep's correction family against one comparator under one metric."""
    return f"trios:{slug(comparator)}:{metric}"


def correction_families(metrics: Sequence[str] = METRICS, alpha: float = 0.05) -> list[Family]:
    """The sweep's families, declared before it runs: BH over the trios (the pre-declared
    trio, which 02 tests, left out) against one comparator under one metric."""
    return [
        Family(
            family_name(comp, metric),
            f"03 trio sweep: H+P_gb against each trio's {comp} ({metric}), one-sided",
            alpha=alpha,
        )
        for comp in ("best member", "panel mean")
        for metric in metrics
    ]


def claim_id(row: Mapping[str, object] | pd.Series) -> str:
    """The ledger id of one row of the sweep (within its page)."""
    return f"trio:{slug(str(row['trio']))}:h+p_gb-vs-{slug(str(row['comparator']))}:{row['metric']}"


def trio_claims(long: pd.DataFrame, *, dataset: str, alpha: float = 0.05) -> list[Claim]:
    """The sweep's own rows (not those 02 owns) as ledger rows, with the sweep's q."""
    return [
        gain_claim(
            row,
            id=claim_id(row),
            a="H+P_gb",
            b=str(row["comparator"]),
            dataset=dataset,
            scope=f"trio: {', '.join(canonical(str(row['families']).split(', ')))}",
            family=family_name(str(row["comparator"]), str(row["metric"])),
            alpha=alpha,
        )
        for _, row in long[long["owner"] == ""].iterrows()
    ]


def with_claims(long: pd.DataFrame, recorded: Mapping[str, str]) -> pd.DataFrame:
    """The long table with a ``claim`` column: each own row's recorded ledger id."""
    return long.assign(
        claim=[recorded[claim_id(r)] if r["owner"] == "" else "" for _, r in long.iterrows()]
    )


def tabulate_trios(long: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """One row per trio, ranked by fused rho: values, both comparisons under both metrics.

    Columns: ``rank`` (1 = best-fusing by rho), ``trio``, ``best_member``, ``fused_rho``,
    ``best_member_rho``, ``panel_rho``, and per comparator (``best`` / ``panel``) and
    metric (``rho`` / ``tau_b``): ``delta_*`` with its ``delta_*_ci_low`` and
    ``delta_*_ci_high``, ``q_*``, plus ``beats_best`` and ``beats_panel`` (rho, q < ``alpha``).
    """
    tags = {"best member": "best", "panel mean": "panel"}
    syms = {"spearman": "rho", "kendall_b": "tau_b"}
    out = []
    for trio, sub in long.groupby("trio", sort=False):
        row: dict[str, object] = {"trio": trio, "best_member": sub["best_member"].iloc[0]}
        if "owner" in sub:
            row["owner"] = sub["owner"].iloc[0]
        for metric, sym in syms.items():
            m = sub[sub["metric"] == metric]
            if m.empty:
                continue
            row[f"fused_{sym}"] = m["value"].iloc[0]
            for comp, tag in tags.items():
                c = m[m["comparator"] == comp].iloc[0]
                row[f"{'best_member' if tag == 'best' else 'panel'}_{sym}"] = c["comparator_value"]
                delta = f"delta_{tag}_{sym}"
                row[delta] = c["delta"]
                row[f"{delta}_ci_low"], row[f"{delta}_ci_high"] = c["ci_low"], c["ci_high"]
                row[f"q_{tag}_{sym}"] = c["q"]
        out.append(row)
    table = pd.DataFrame(out).sort_values("fused_rho", ascending=False).reset_index(drop=True)
    table.insert(0, "rank", np.arange(1, len(table) + 1))
    table["beats_best"] = (table["delta_best_rho"] > 0) & (table["q_best_rho"] < alpha)
    table["beats_panel"] = (table["delta_panel_rho"] > 0) & (table["q_panel_rho"] < alpha)
    return table


@dataclass(frozen=True)
class TrioSummary:
    """What the sweep says, as numbers a notebook sentence is built from.

    Attributes:
        n_trios: trios swept; ``n_tested`` those tested here (the pre-declared trio is
            02's, see :func:`sweep_trios`).
        beats_best_point, beats_best_q: tested trios whose fused rho exceeds the best
            member's, by point estimate and with q < alpha.
        beats_panel_point, beats_panel_q: the same against the panel mean.
        fused_min, fused_max: range of fused rho; ``worst_trio``, ``best_trio`` name them.
        smallest_gain: the smallest delta against the best member (rho), with its CI.
        strongest, weakest: the families with the highest and lowest holistic rho.
        top_k: how many best-fusing trios the next two counts look at.
        top_with_strongest, top_with_weakest: of the ``top_k`` best-fusing trios, how
            many contain the strongest / the weakest holistic judge.
        verdict_trio: the three families with the highest holistic rho (choosing by
            verdicts); ``verdict_rank`` its rank among all trios by fused rho.
        alpha: the q threshold used.
    """

    n_trios: int
    n_tested: int
    beats_best_point: int
    beats_best_q: int
    beats_panel_point: int
    beats_panel_q: int
    fused_min: float
    fused_max: float
    worst_trio: str
    best_trio: str
    smallest_gain: float
    smallest_gain_ci: tuple[float, float]
    strongest: str
    weakest: str
    top_k: int
    top_with_strongest: int
    top_with_weakest: int
    verdict_trio: str
    verdict_rank: int
    alpha: float


def summarize_trios(
    table: pd.DataFrame, singles: pd.DataFrame, *, top_k: int = 3, alpha: float = 0.05
) -> TrioSummary:
    """Summarise :func:`tabulate_trios` given every family's holistic rho (``best_single``'s table).

    ``singles`` has columns ``family`` and ``rho``; the verdict-selected trio is its top
    three rows, the choice a practitioner would make from holistic scores alone.
    """
    ranked = singles.sort_values("rho", ascending=False)["family"].tolist()
    strongest, weakest = ranked[0], ranked[-1]
    members = table["trio"].str.split("+")
    top = members.head(top_k)
    verdict = ranked[:3]
    match = table[members.map(set) == set(verdict)]
    if match.empty:
        raise ValueError(f"the verdict-selected trio {verdict} is not among the swept trios")
    smallest = table.loc[table["delta_best_rho"].idxmin()]
    tested = table[table["owner"] == ""] if "owner" in table else table
    return TrioSummary(
        n_trios=len(table),
        n_tested=len(tested),
        beats_best_point=int((tested["delta_best_rho"] > 0).sum()),
        beats_best_q=int(((tested["delta_best_rho"] > 0) & (tested["q_best_rho"] < alpha)).sum()),
        beats_panel_point=int((tested["delta_panel_rho"] > 0).sum()),
        beats_panel_q=int(
            ((tested["delta_panel_rho"] > 0) & (tested["q_panel_rho"] < alpha)).sum()
        ),
        fused_min=float(table["fused_rho"].min()),
        fused_max=float(table["fused_rho"].max()),
        worst_trio=str(table.loc[table["fused_rho"].idxmin(), "trio"]),
        best_trio=str(table.loc[table["fused_rho"].idxmax(), "trio"]),
        smallest_gain=float(smallest["delta_best_rho"]),
        smallest_gain_ci=(
            float(smallest["delta_best_rho_ci_low"]),
            float(smallest["delta_best_rho_ci_high"]),
        ),
        strongest=strongest,
        weakest=weakest,
        top_k=min(top_k, len(table)),
        top_with_strongest=int(sum(strongest in m for m in top)),
        top_with_weakest=int(sum(weakest in m for m in top)),
        verdict_trio=str(match["trio"].iloc[0]),
        verdict_rank=int(match["rank"].iloc[0]),
        alpha=alpha,
    )


def compare_two_trios(
    blocks: Blocks,
    fused: Mapping[tuple[str, ...], np.ndarray],
    a: Sequence[str],
    b: Sequence[str],
    *,
    metrics: Sequence[str] = METRICS,
    n_resamples: int = 10_000,
    seed: int = 0,
) -> pd.DataFrame:
    """Paired bootstrap of trio ``a``'s fused arm against trio ``b``'s (two-sided p).

    Used for "does choosing families by their verdicts fuse better than the pre-declared
    trio?"; neither direction is claimed in advance, so the p is two-sided.
    """
    y = blocks.y.to_numpy(float)
    key_a, key_b = _key(fused, a), _key(fused, b)
    rows = [
        paired_bootstrap(
            y,
            fused[key_a],
            fused[key_b],
            metric,
            n_resamples=n_resamples,
            seed=seed,
            alternative="two-sided",
        ).as_row(trio_a=trio_label(key_a), trio_b=trio_label(key_b))
        for metric in metrics
    ]
    return pd.DataFrame(rows)


SAME_TRIO = (
    "the three families with the highest holistic ρ by point estimate are the pre-declared "
    "trio: a trio against itself"
)
"""Why the trio chosen by holistic ρ is not compared with the pre-declared trio when the two
are one trio (the difference is zero by construction)."""


def versus_claims(
    versus: pd.DataFrame | None,
    chosen: Sequence[str],
    predeclared: Sequence[str],
    *,
    dataset: str,
    alpha: float = 0.05,
) -> list[Claim]:
    """The trio chosen by holistic ρ against the pre-declared trio as ledger rows, one per row
    of :func:`compare_two_trios`'s table (two-sided, a family of one each: exploratory).

    When the two are one trio there is nothing to test: ``versus`` is None and the one row
    returned is kept out of every family (:data:`SAME_TRIO`), with no numbers.
    """
    a = f"the three families with the highest holistic ρ by point estimate ({trio_label(chosen)})"
    b = f"the pre-declared trio ({trio_label(predeclared)})"
    scope = f"trios: {', '.join(canonical(chosen))} against {', '.join(canonical(predeclared))}"
    if set(chosen) == set(predeclared):
        nan = float("nan")
        return [
            Claim(
                id="trio:chosen-vs-pre-declared:spearman", a=a, b=b, dataset=dataset,
                scope=scope, metric="spearman", unit="images", estimate=nan, ci_low=nan,
                ci_high=nan, excluded=SAME_TRIO, alpha=alpha,
            )
        ]  # fmt: skip
    if versus is None:
        raise ValueError("two different trios need compare_two_trios's table")
    return [
        Claim.of_row(
            {**r.to_dict(), "q": float("nan")}, a=a, b=b, dataset=dataset,
            id=f"trio:chosen-vs-pre-declared:{r['metric']}", scope=scope,
            metric=str(r["metric"]), unit="images",
            alternative="two-sided", alpha=alpha, note=f"fold partition seed {FOLD_SEED}",
        )
        for _, r in versus.iterrows()
    ]  # fmt: skip


def _key(fused: Mapping[tuple[str, ...], np.ndarray], trio: Sequence[str]) -> tuple[str, ...]:
    for key in fused:
        if set(key) == set(trio):
            return key
    raise KeyError(f"no fitted trio {sorted(trio)}")


def interval_sides(table: pd.DataFrame, comparator: str) -> tuple[int, int]:
    """How many trios' 95% intervals of Δρ against ``comparator`` (``best`` or ``panel``, as
    in :func:`tabulate_trios`'s column names) lie wholly above zero, and wholly below."""
    low = table[f"delta_{comparator}_rho_ci_low"]
    high = table[f"delta_{comparator}_rho_ci_high"]
    return int((low > 0).sum()), int((high < 0).sum())
