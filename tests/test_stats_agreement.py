"""Agreement statistics against their reference implementations, on random data with gaps.

References: ``krippendorff.alpha`` (alpha), ``pingouin.intraclass_corr`` (ICC), scikit-learn's
``cohen_kappa_score`` (kappa), statsmodels' ``fleiss_kappa`` and t intervals, scipy's rank
correlations, a loop-by-loop re-implementation of the alternative annotator test written
here from the paper's definitions (leave one out; win on S >= S; one-sided t-test of
W_h - W_f against epsilon; Benjamini-Yekutieli by the step-up rule), and numpy for the
effective number of judges.
"""

from __future__ import annotations

import math
import time

import krippendorff
import numpy as np
import pandas as pd
import pingouin
import pytest
from scipy import stats
from sklearn.isotonic import IsotonicRegression
from sklearn.metrics import cohen_kappa_score
from sklearn.model_selection import KFold
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.weightstats import DescrStatsW

from judgepanel.stats import (
    IsotonicMap,
    LinearMap,
    alpha_interval,
    alt_test,
    cohen_kappa,
    fleiss_kappa,
    icc_table,
    judge_agreement,
    krippendorff_alpha,
    map_scores,
    mean_bias,
    panel_size,
    panel_size_from_errors,
    percentile_ci,
    rating_matrix,
    resample_indices,
    resampled_alpha,
    resampled_kappa,
    resampled_panel,
    to_grid,
)

LEVELS = ("nominal", "ordinal", "interval", "ratio")


def _matrix(seed: int, raters: int = 5, items: int = 40, missing: float = 0.3) -> np.ndarray:
    """Raters x items scores on 1-5, related through a true score, NaN where missing."""
    rng = np.random.default_rng(seed)
    truth = rng.uniform(1, 5, items)
    x = np.clip(np.round(truth + rng.normal(0, 0.8, (raters, items))), 1, 5)
    x[rng.random(x.shape) < missing] = np.nan
    return x


def _tidy(x: np.ndarray, dimension: str | None = None) -> pd.DataFrame:
    rows = [
        {"image_id": f"img{j:03d}", "rater": f"r{i}", "score": x[i, j]}
        for i in range(x.shape[0])
        for j in range(x.shape[1])
        if np.isfinite(x[i, j])
    ]
    frame = pd.DataFrame(rows)
    if dimension is not None:
        frame["dimension"] = dimension
    return frame


# --- inputs ---------------------------------------------------------------------------------


def test_tidy_frame_gives_the_matrix_in_sorted_order():
    x = _matrix(1, raters=4, items=12)
    frame = _tidy(x).sample(frac=1.0, random_state=3)  # row order must not matter
    m = rating_matrix(frame)
    assert m.raters == ("r0", "r1", "r2", "r3")
    assert m.items == tuple(f"img{j:03d}" for j in range(12))
    np.testing.assert_array_equal(m.values, x)


def test_tidy_frame_rejects_repeats_and_unpicked_dimensions():
    frame = _tidy(_matrix(2, raters=3, items=10))
    with pytest.raises(ValueError, match="repeat"):
        rating_matrix(pd.concat([frame, frame.iloc[:1]]))
    two = pd.concat([frame.assign(dimension="light"), frame.assign(dimension="colour")])
    with pytest.raises(ValueError, match="dimension"):
        rating_matrix(two)
    np.testing.assert_array_equal(
        rating_matrix(two, dimension="light").values, rating_matrix(frame).values
    )


# --- Krippendorff's alpha -------------------------------------------------------------------


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_alpha_equals_krippendorff_with_missing_values(level, seed):
    x = _matrix(seed)
    if seed == 2:
        x = 0.5 * x + 0.25  # non-integer values, away from zero (ratio)
    expected = krippendorff.alpha(reliability_data=x, level_of_measurement=level)
    assert krippendorff_alpha(x, level) == pytest.approx(expected, abs=1e-9)
    assert krippendorff_alpha(_tidy(x), level) == pytest.approx(expected, abs=1e-9)


def test_alpha_interval_level_takes_continuous_scores():
    rng = np.random.default_rng(5)
    truth = rng.normal(size=60)
    x = truth + rng.normal(0, 0.5, (4, 60))
    x[rng.random(x.shape) < 0.25] = np.nan
    expected = krippendorff.alpha(reliability_data=x, level_of_measurement="interval")
    assert krippendorff_alpha(x, "interval") == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("level", LEVELS)
def test_resampled_alpha_equals_krippendorff_on_materialised_resamples(level):
    x = _matrix(3, items=30)
    idx = resample_indices(30, 4, seed=9)
    got = resampled_alpha(x, level, indices=idx)
    for b, row in enumerate(idx):
        expected = krippendorff.alpha(reliability_data=x[:, row], level_of_measurement=level)
        assert got[b] == pytest.approx(expected, abs=1e-9)


def test_alpha_interval_is_the_percentile_of_resampled_items():
    x = _matrix(4, items=50, missing=0.5)
    pairable = np.isfinite(x).sum(axis=0) >= 2
    result = alpha_interval(x, "ordinal", n_resamples=300, seed=11)
    kept = x[:, pairable]
    draws = resampled_alpha(kept, "ordinal", indices=resample_indices(kept.shape[1], 300, 11))
    low, high = percentile_ci(draws[np.isfinite(draws)])
    assert result.n_items == int(pairable.sum()) < 50
    assert (result.ci_low, result.ci_high) == pytest.approx((low, high), abs=1e-12)
    assert result.ci_low < result.estimate < result.ci_high
    assert result.estimate == pytest.approx(
        krippendorff.alpha(reliability_data=x, level_of_measurement="ordinal"), abs=1e-9
    )
    assert alpha_interval(x, "ordinal", n_resamples=300, seed=11) == result


def test_alpha_bootstrap_is_fast():
    x = _matrix(6, raters=6, items=500, missing=0.2)
    start = time.perf_counter()
    result = alpha_interval(x, "ordinal", n_resamples=10_000, seed=0)
    assert time.perf_counter() - start < 10.0
    assert result.n_resamples == 10_000


# --- ICC ------------------------------------------------------------------------------------


def _icc_frame(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    truth = rng.normal(0, 1, 40)
    x = truth + rng.normal(0, 0.7, (4, 40)) + 0.3 * np.arange(4)[:, None]
    x[rng.random(x.shape) < 0.08] = np.nan
    return _tidy(x)


@pytest.mark.parametrize("seed", [0, 1])
def test_icc_table_equals_pingouin(seed):
    frame = _icc_frame(seed)
    ours = icc_table(frame)
    complete = frame.pivot(index="image_id", columns="rater", values="score").dropna()
    assert (ours["n_items"] == len(complete)).all()
    assert (ours["n_items_incomplete"] == 40 - len(complete)).all()
    assert (ours["n_raters"] == 4).all()
    ref = pingouin.intraclass_corr(
        data=frame, targets="image_id", raters="rater", ratings="score", nan_policy="omit"
    )
    assert list(ours["mcgraw_wong"]) == list(ref["Type"])
    np.testing.assert_allclose(ours["estimate"], ref["ICC"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(ours["F"], ref["F"], rtol=1e-9)
    np.testing.assert_allclose(ours["p"], ref["pval"], rtol=1e-9, atol=1e-15)
    np.testing.assert_array_equal(ours["df2"], ref["df2"])
    # pingouin 0.7.0 rounds CI95 to 2 decimals by default: agree to that rounding ...
    ref_ci = np.stack(ref["CI95"].to_numpy())
    assert np.all(np.abs(ours[["ci_low", "ci_high"]].to_numpy() - ref_ci) <= 0.005 + 1e-12)
    # ... and, with its rounding switched off, to 1e-9
    saved = pingouin.options.copy()
    try:
        pingouin.options["round.column.CI95"] = None
        exact = pingouin.intraclass_corr(
            data=frame, targets="image_id", raters="rater", ratings="score", nan_policy="omit"
        )
    finally:
        pingouin.options.clear()
        pingouin.options.update(saved)
    np.testing.assert_allclose(
        ours[["ci_low", "ci_high"]].to_numpy(), np.stack(exact["CI95"].to_numpy()), atol=1e-9
    )


def test_icc_needs_complete_cases():
    x = _matrix(7, raters=3, items=10, missing=0.0)
    x[0, 1:] = np.nan
    with pytest.raises(ValueError, match="complete"):
        icc_table(x)


# --- kappas ---------------------------------------------------------------------------------


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohen_kappa_equals_sklearn_dropping_missing_pairs(weights):
    x = _matrix(8, raters=2, items=80, missing=0.15)
    both = np.isfinite(x).all(axis=0)
    expected = cohen_kappa_score(
        x[0, both].astype(int), x[1, both].astype(int), weights=weights, labels=np.arange(1, 6)
    )
    assert cohen_kappa(x[0], x[1], weights=weights, labels=range(1, 6)) == pytest.approx(
        expected, abs=1e-12
    )


def test_cohen_kappa_counts_an_unused_middle_category_as_a_step():
    a = np.array([1, 2, 4, 4, 1, 2, 4, 1])
    b = np.array([1, 4, 4, 2, 1, 2, 1, 4])
    grid = cohen_kappa_score(a, b, weights="quadratic", labels=[1, 2, 3, 4])
    assert cohen_kappa(a, b, weights="quadratic") == pytest.approx(grid, abs=1e-12)
    assert cohen_kappa(a, b, weights="quadratic") != pytest.approx(
        cohen_kappa_score(a, b, weights="quadratic"), abs=1e-6
    )
    with pytest.raises(ValueError, match="whole-number"):
        cohen_kappa(a + 0.5, b)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_resampled_kappa_equals_sklearn_on_materialised_resamples(weights):
    x = np.nan_to_num(_matrix(9, raters=2, items=60, missing=0.0))
    idx = resample_indices(60, 5, seed=2)
    got = resampled_kappa(x[0], x[1], weights=weights, labels=range(1, 6), indices=idx)
    for b, row in enumerate(idx):
        expected = cohen_kappa_score(
            x[0, row].astype(int), x[1, row].astype(int), weights=weights, labels=range(1, 6)
        )
        assert got[b] == pytest.approx(expected, abs=1e-12)


def test_fleiss_kappa_equals_statsmodels_on_items_with_the_modal_count():
    x = _matrix(10, raters=6, items=80, missing=0.12)
    counts = np.isfinite(x).sum(axis=0)
    sizes, freq = np.unique(counts, return_counts=True)
    modal = int(sizes[np.argmax(freq)])
    used = x[:, counts == modal].T  # items x raters, NaN where missing
    table = np.stack(
        [np.bincount(row[np.isfinite(row)].astype(int), minlength=6)[1:] for row in used]
    )
    result = fleiss_kappa(_tidy(x))
    assert (result.n_ratings, result.n_items) == (modal, used.shape[0])
    assert result.estimate == pytest.approx(sm_fleiss_kappa(table, method="fleiss"), abs=1e-12)
    complete = x[:, np.isfinite(x).all(axis=0)].T.astype(int)
    full = fleiss_kappa(x, n_ratings=6)
    assert full.estimate == pytest.approx(
        sm_fleiss_kappa(aggregate_raters(complete)[0], method="fleiss"), abs=1e-12
    )


# --- a judge against the human mean ---------------------------------------------------------


def _people_and_judge(seed: int, items: int = 60) -> tuple[pd.DataFrame, pd.DataFrame]:
    """People on 1-5 (with gaps) and one judge on 1-10."""
    rng = np.random.default_rng(seed)
    truth = rng.uniform(1, 5, items)
    x = np.clip(np.round(truth + rng.normal(0, 0.8, (5, items))), 1, 5)
    x[rng.random(x.shape) < 0.3] = np.nan
    judge = np.clip(np.round(1 + (truth - 1) * 9 / 4 + rng.normal(0, 1.5, items)), 1, 10)
    judge_frame = pd.DataFrame(
        {"image_id": [f"img{j:03d}" for j in range(items)], "score": judge, "rater": "j"}
    )
    return _tidy(x), judge_frame


def test_mean_bias_equals_statsmodels_t_interval():
    rng = np.random.default_rng(12)
    judge, human = rng.normal(3.2, 1, 50), rng.normal(3.0, 1, 50)
    result = mean_bias(judge, human, confidence=0.9, mapping="linear 1-10 -> 1-5")
    d = DescrStatsW(judge - human)
    assert result.estimate == pytest.approx(d.mean, abs=1e-12)
    assert (result.ci_low, result.ci_high) == pytest.approx(d.tconfint_mean(alpha=0.1), abs=1e-12)
    assert result.p == pytest.approx(d.ttest_mean(0.0)[1], abs=1e-12)
    assert result.mapping == "linear 1-10 -> 1-5"


def test_judge_agreement_against_references_and_materialised_resamples():
    people, judge = _people_and_judge(13)
    linear = LinearMap((1, 10), (1, 5))
    table = judge_agreement(
        judge, people, scale=(1, 5), mapping=linear, n_resamples=40, seed=4
    ).set_index("metric")
    matrix = rating_matrix(people)
    y = np.nanmean(matrix.values, axis=0)
    raw = judge.set_index("image_id").loc[list(matrix.items), "score"].to_numpy()
    mapped = 1 + (raw - 1) * 4 / 9
    grid_j, grid_y = to_grid(mapped, (1, 5)), to_grid(y, (1, 5))

    def qwk(a, b):
        return cohen_kappa_score(a, b, weights="quadratic", labels=range(1, 6))

    def alpha(a, b):
        return krippendorff.alpha(
            reliability_data=np.vstack([a, b]), level_of_measurement="interval"
        )

    references = {
        "spearman": (lambda r: stats.spearmanr(y[r], raw[r]).statistic),
        "kendall_b": (lambda r: stats.kendalltau(y[r], raw[r]).statistic),
        "qwk": (lambda r: qwk(grid_j[r], grid_y[r])),
        "alpha_interval": (lambda r: alpha(mapped[r], y[r])),
    }
    everything = np.arange(y.size)
    rows = resample_indices(y.size, 40, 4)
    for metric, ref in references.items():
        assert table.loc[metric, "estimate"] == pytest.approx(ref(everything), abs=1e-9)
        low, high = percentile_ci([ref(r) for r in rows])
        assert table.loc[metric, "ci_low"] == pytest.approx(low, abs=1e-9)
        assert table.loc[metric, "ci_high"] == pytest.approx(high, abs=1e-9)
    assert table.loc["bias", "estimate"] == pytest.approx(np.mean(mapped - y), abs=1e-12)
    assert set(table.loc[["qwk", "alpha_interval", "bias"], "mapping"]) == {linear.name}
    assert "rounded half up" in table.loc["qwk", "note"]


# --- scale maps -----------------------------------------------------------------------------


def test_linear_map_sends_ends_to_ends_and_names_itself():
    linear = LinearMap((1, 10), (1, 5))
    np.testing.assert_allclose(linear([1, 10, 5.5, np.nan]), [1, 5, 3, np.nan])
    assert linear.name == "linear 1-10 -> 1-5"
    assert map_scores([1, 10], None).mapping == "identity"
    with pytest.raises(ValueError):
        LinearMap((10, 1), (1, 5))


def test_isotonic_map_is_out_of_fold():
    rng = np.random.default_rng(14)
    x = rng.integers(1, 11, 100).astype(float)
    y = np.clip(1 + (x - 1) * 4 / 9 + rng.normal(0, 0.5, 100), 1, 5)
    got = map_scores(x, IsotonicMap(), y)
    expected = np.empty(100)
    for train, test in KFold(5, shuffle=True, random_state=42).split(x):
        model = IsotonicRegression(out_of_bounds="clip").fit(x[train], y[train])
        expected[test] = model.predict(x[test])
    np.testing.assert_allclose(got.values, expected, atol=1e-12)
    assert got.mapping == "isotonic out-of-fold (5 folds, seed 42)"
    with pytest.raises(ValueError, match="human_mean"):
        map_scores(x, IsotonicMap())


def test_to_grid_rounds_half_up_and_clips():
    np.testing.assert_array_equal(
        to_grid([2.5, 3.5, 0.2, 5.7, 4.49], (1, 5)), np.array([3, 4, 1, 5, 4])
    )


# --- the alternative annotator test ---------------------------------------------------------


def _reference_alt_test(
    humans: dict[str, dict[str, float]],
    judge: dict[str, float],
    epsilon: float,
    metric: str,
    q: float = 0.05,
    min_humans: int = 2,
    min_items: int = 30,
) -> tuple[float, float, list[str], list[float], set[str]]:
    """The alt-test one loop at a time, from the paper's definitions."""

    def alignment(x: float, others: list[float]) -> float:
        if metric == "neg_rmse":
            return -math.sqrt(sum((x - o) ** 2 for o in others) / len(others))
        if metric == "abs":
            return -abs(x - sum(others) / len(others))
        return sum(1.0 for o in others if o == x) / len(others)

    raters_of: dict[str, list[str]] = {}
    for person, answers in humans.items():
        for item in answers:
            raters_of.setdefault(item, []).append(person)
    usable = {i for i, who in raters_of.items() if len(who) >= min_humans and i in judge}
    tested, pvals, advantage = [], [], []
    for person, answers in humans.items():
        items = [i for i in answers if i in usable]
        if len(items) < min_items:
            continue
        diffs, judge_wins = [], []
        for item in items:
            others = [humans[g][item] for g in raters_of[item] if g != person]
            s_person = alignment(answers[item], others)
            s_judge = alignment(judge[item], others)
            judge_wins.append(1 if s_judge >= s_person else 0)
            diffs.append((1 if s_person >= s_judge else 0) - judge_wins[-1])
        pvals.append(float(stats.ttest_1samp(diffs, epsilon, alternative="less").pvalue))
        advantage.append(sum(judge_wins) / len(judge_wins))
        tested.append(person)
    m = len(pvals)
    harmonic = sum(1.0 / k for k in range(1, m + 1))
    order = sorted(range(m), key=lambda k: pvals[k])
    last = 0
    for rank, k in enumerate(order, start=1):
        if pvals[k] <= rank / m * q / harmonic:
            last = rank
    rejected = {tested[k] for k in order[:last]}
    return len(rejected) / m, sum(advantage) / m, tested, pvals, rejected


def _alt_data(
    seed: int, items: int = 120, judge_noise: float = 0.6
) -> tuple[pd.DataFrame, pd.Series, np.ndarray]:
    """Six annotators on 1-5 with gaps (one too sparse to test), a judge near the truth."""
    rng = np.random.default_rng(seed)
    truth = rng.uniform(1, 5, items)
    x = np.clip(np.round(truth + rng.normal(0, 0.9, (6, items))), 1, 5)
    x[rng.random(x.shape) < 0.25] = np.nan
    x[5, 20:] = np.nan  # annotator r5 rated only 20 images
    judge = np.clip(np.round(2 * (truth + rng.normal(0, judge_noise, items))) / 2, 1, 5)
    ids = [f"img{j:03d}" for j in range(items)]
    return _tidy(x), pd.Series(judge, index=ids), x


def _as_dicts(frame: pd.DataFrame, judge: pd.Series):
    humans: dict[str, dict[str, float]] = {}
    for row in frame.sort_values(["rater", "image_id"]).itertuples():
        humans.setdefault(row.rater, {})[row.image_id] = float(row.score)
    return humans, {k: float(v) for k, v in judge.items()}


@pytest.mark.parametrize("metric", ["neg_rmse", "abs", "accuracy"])
@pytest.mark.parametrize("seed", [0, 1])
def test_alt_test_equals_the_loop_reference(metric, seed):
    frame, judge, _ = _alt_data(seed)
    if metric == "accuracy":
        judge = np.round(judge + 0.01)
    humans, judge_dict = _as_dicts(frame, judge)
    wr, ap, tested, pvals, rejected = _reference_alt_test(humans, judge_dict, 0.15, metric)
    result = alt_test(frame, judge, epsilon=0.15, metric=metric)
    table = result.per_annotator
    assert list(table["annotator"]) == tested
    assert result.skipped == ("r5",)
    np.testing.assert_allclose(table["p"], pvals, rtol=1e-12, atol=1e-300)
    assert set(table.loc[table["rejected"], "annotator"]) == rejected
    assert result.winning_rate == pytest.approx(wr, abs=1e-12)
    assert result.advantage_probability == pytest.approx(ap, abs=1e-12)
    assert result.passed == (wr >= 0.5)
    assert (result.epsilon, result.metric, result.q, result.mapping) == (
        0.15,
        metric,
        0.05,
        "identity",
    )


def test_alt_test_by_q_values_equal_statsmodels():
    frame, judge, _ = _alt_data(2)
    table = alt_test(frame, judge, epsilon=0.1).per_annotator
    np.testing.assert_allclose(table["q_by"], multipletests(table["p"], method="fdr_by")[1])


def test_alt_test_a_judge_at_the_human_mean_passes_and_a_random_judge_fails():
    frame, _, x = _alt_data(3)
    ids = [f"img{j:03d}" for j in range(x.shape[1])]
    mean_judge = pd.Series(np.nanmean(x, axis=0), index=ids)
    good = alt_test(frame, mean_judge, epsilon=0.1)
    assert good.passed and good.winning_rate == 1.0
    assert good.advantage_probability > 0.95
    rng = np.random.default_rng(4)
    random_judge = pd.Series(rng.integers(1, 6, x.shape[1]).astype(float), index=ids)
    bad = alt_test(frame, random_judge, epsilon=0.2)
    assert not bad.passed and bad.winning_rate == 0.0
    assert bad.advantage_probability < good.advantage_probability


def test_alt_test_a_larger_epsilon_makes_passing_easier():
    frame, judge, _ = _alt_data(5, judge_noise=1.0)
    results = [alt_test(frame, judge, epsilon=e) for e in (0.0, 0.1, 0.2, 0.3, 0.5)]
    rates = [r.winning_rate for r in results]
    assert rates == sorted(rates) and rates[0] < rates[-1]
    pvals = np.stack([r.per_annotator["p"].to_numpy() for r in results])
    assert np.all(np.diff(pvals, axis=0) <= 0)
    assert len({r.advantage_probability for r in results}) == 1  # epsilon is only the bar


def test_alt_test_pools_image_dimension_pairs_as_instances():
    frame_a, judge_a, _ = _alt_data(6, items=40)
    frame_b, judge_b, _ = _alt_data(7, items=40)
    people = pd.concat([frame_a.assign(dimension="light"), frame_b.assign(dimension="colour")])
    judge = pd.concat(
        [
            pd.DataFrame({"image_id": judge_a.index, "dimension": "light", "score": judge_a}),
            pd.DataFrame({"image_id": judge_b.index, "dimension": "colour", "score": judge_b}),
        ]
    )
    pooled = alt_test(people, judge, epsilon=0.2, pool_dimensions=True)
    flat_people = people.assign(image_id=people["image_id"] + "|" + people["dimension"])
    flat_judge = pd.Series(
        judge["score"].to_numpy(), index=judge["image_id"] + "|" + judge["dimension"]
    )
    flat = alt_test(flat_people.drop(columns="dimension"), flat_judge, epsilon=0.2)
    assert pooled.n_instances == flat.n_instances > 60
    pd.testing.assert_frame_equal(pooled.per_annotator, flat.per_annotator, rtol=1e-12)
    with pytest.raises(ValueError, match="dimension"):
        alt_test(people, judge, epsilon=0.2)


def test_alt_test_maps_and_rounds_the_judge_scale():
    frame, judge, _ = _alt_data(8)
    on_ten = 1 + (judge - 1) * 9 / 4
    linear = LinearMap((1, 10), (1, 5))
    mapped = alt_test(frame, on_ten, epsilon=0.15, mapping=linear)
    direct = alt_test(frame, judge, epsilon=0.15)
    pd.testing.assert_frame_equal(mapped.per_annotator, direct.per_annotator, rtol=1e-9)
    assert mapped.mapping == "linear 1-10 -> 1-5"
    with pytest.raises(ValueError, match="scale="):
        alt_test(frame, on_ten + 0.3, epsilon=0.15, metric="accuracy", mapping=linear)
    rounded = alt_test(frame, on_ten, epsilon=0.15, metric="accuracy", mapping=linear, scale=(1, 5))
    assert "rounded half up" in rounded.mapping
    with pytest.raises(TypeError):
        alt_test(frame, judge)  # epsilon has no default


# --- effective number of judges -------------------------------------------------------------


def _direct_panel(errors: np.ndarray) -> tuple[float, float, float]:
    corr = np.corrcoef(errors)
    n = corr.shape[0]
    r_bar = corr[~np.eye(n, dtype=bool)].mean()
    eig = np.linalg.eigvalsh(corr)
    return r_bar, n / (1 + (n - 1) * r_bar), eig.sum() ** 2 / (eig**2).sum()


def test_panel_size_equals_a_direct_numpy_computation():
    rng = np.random.default_rng(15)
    errors = 0.7 * rng.normal(size=200) + rng.normal(size=(5, 200))
    result = panel_size_from_errors(errors, n_resamples=200, seed=3)
    r_bar, n_eff, pr = _direct_panel(errors)
    assert result.mean_error_correlation == pytest.approx(r_bar, abs=1e-9)
    assert result.n_eff == pytest.approx(n_eff, abs=1e-9)
    assert result.participation_ratio == pytest.approx(pr, abs=1e-9)
    assert result.ci_low < result.n_eff < result.ci_high
    idx = resample_indices(200, 200, 3)
    draws = resampled_panel(errors, indices=idx)
    for b in range(3):
        np.testing.assert_allclose(draws[b], _direct_panel(errors[:, idx[b]]), atol=1e-9)
    low, high = percentile_ci(draws[:, 1])
    assert (result.ci_low, result.ci_high) == pytest.approx((low, high), abs=1e-12)


def test_panel_size_independent_errors_give_n_and_identical_errors_give_one():
    rng = np.random.default_rng(16)
    independent = panel_size_from_errors(rng.normal(size=(5, 3000)), n_resamples=100)
    assert independent.n_eff == pytest.approx(5, abs=0.3)
    assert independent.participation_ratio == pytest.approx(5, abs=0.1)
    same = np.tile(rng.normal(size=300), (4, 1))
    identical = panel_size_from_errors(same, n_resamples=100)
    assert identical.n_eff == pytest.approx(1, abs=1e-9)
    assert identical.participation_ratio == pytest.approx(1, abs=1e-9)


def test_panel_size_from_frames_maps_the_judges_first():
    rng = np.random.default_rng(17)
    people, _ = _people_and_judge(18, items=80)
    means = people.groupby("image_id")["score"].mean()
    truth = means.to_numpy()
    judges = pd.concat(
        [
            pd.DataFrame(
                {
                    "image_id": means.index,
                    "rater": f"j{k}",
                    "score": np.clip(
                        np.round(1 + (truth - 1) * 9 / 4 + rng.normal(0, 1.2, 80)), 1, 10
                    ),
                }
            )
            for k in range(3)
        ]
    )
    result = panel_size(judges, people, mapping=LinearMap((1, 10), (1, 5)), n_resamples=100)
    wide = judges.pivot(index="rater", columns="image_id", values="score")[means.index]
    errors = 1 + (wide.to_numpy() - 1) * 4 / 9 - truth
    r_bar, n_eff, pr = _direct_panel(errors)
    assert result.judges == ("j0", "j1", "j2")
    assert result.mean_error_correlation == pytest.approx(r_bar, abs=1e-9)
    assert result.n_eff == pytest.approx(n_eff, abs=1e-9)
    assert result.participation_ratio == pytest.approx(pr, abs=1e-9)
    assert result.mapping == "linear 1-10 -> 1-5"


def test_the_one_sided_t_test_gives_scipys_bits():
    """The alt-test's own t test is scipy's ``ttest_1samp(..., alternative="less")``
    to the bit: on win/loss differences, on continuous draws and on constant samples."""
    from judgepanel.stats.alt_test import t_test_less

    rng = np.random.default_rng(11)
    samples = [rng.integers(-1, 2, n).astype(float) for n in (2, 3, 30, 31, 257, 4000)]
    samples += [rng.normal(0.1, 2.0, n) for n in (5, 99, 1000)]
    samples += [np.full(40, 0.2), np.full(40, -1.0), np.full(40, 1.0)]
    for d in samples:
        for popmean in (0.0, 0.1, 0.2, 0.15):
            with np.errstate(divide="ignore", invalid="ignore"):
                want = stats.ttest_1samp(d, popmean, alternative="less")
            t, p = t_test_less(d, popmean)
            np.testing.assert_array_equal([t, p], [float(want.statistic), float(want.pvalue)])
