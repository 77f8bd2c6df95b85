"""The VAB study's claims: built-in rows out of their family, counts from q, one verdict."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from vab_rows import vab_row

from judgepanel.claims.rows import HIGHEST_ONLY, LEADS, NOT_TESTED, Claim, check_families, declare
from judgepanel.claims.wording import BEATS, FALLS_BELOW, NO_DIFFERENCE, count
from judgepanel.stats import bh
from judgepanel.stats.means import mean_difference
from judgepanel.studies.vab import (
    FUSED,
    LIKE_FOR_LIKE,
    OWN_PROTOCOL,
    PANEL,
    as_headline,
    chance_claims,
    chance_table,
    compare_judges,
    correction_families,
    leader_claim,
    leader_test,
    like_for_like_claims,
    pair_claims,
    position_claims,
    position_table,
    primary_claim,
    primary_table,
    rank_vs_direct,
    tally,
    vote_claims,
    vote_table,
)
from judgepanel.studies.vab.position import MIRROR, SUMS_TO_ONE
from judgepanel.studies.vab.rankers import BOTH_RANKERS, BUILT_IN
from judgepanel.studies.vab.vote import PAIRS_ONLY


def _scores(hits: dict[str, np.ndarray], *, k: int = 3, order_blind=()) -> pd.DataFrame:
    """task_scores-like rows: ``hits[judge][task, order]`` right or wrong in three orders,
    for Top-1 and TB-1 alike; a judge in ``order_blind`` answers every order alike."""
    rows = []
    for judge, h in hits.items():
        for t in range(h.shape[0]):
            right = h[t] if judge not in order_blind else np.repeat(h[t, 0], 3)
            for metric in ("top1", "tb1"):
                rows.append({
                    "judge": judge, "task_id": f"t{t}", "metric": metric, "k": k,
                    "ap1": float(right.mean()), "pass3": float(right.all()),
                    "chance_ap1": 1 / k if metric == "top1" else 1 / (k * (k - 1)),
                })  # fmt: skip
    return pd.DataFrame(rows)


def _world(n: int = 60, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    hits = {
        "f": rng.random((n, 3)) < 0.55,
        "g": rng.random((n, 3)) < 0.45,
        "rank:f": rng.random((n, 3)) < 0.6,
        "rank:g": rng.random((n, 3)) < 0.5,
        PANEL: rng.random((n, 3)) < 0.75,
        FUSED: rng.random((n, 3)) < 0.5,
    }
    return _scores(hits, order_blind=("rank:f", "rank:g", PANEL, FUSED))


PAIRS = [("rank:f", "f"), ("rank:g", "g"), (PANEL, "f"), (FUSED, "f"), (FUSED, PANEL)]


def test_built_in_rows_leave_the_family_whose_q_is_bh_over_the_rest_alone():
    table = rank_vs_direct(_world(), [*PAIRS, ("f", "rank:f")], n_resamples=400, seed=1)
    keys = table[["a", "b", "stat", "metric"]].itertuples(index=False, name=None)
    reasons = dict(zip(keys, table["excluded"], strict=True))
    for metric in ("top1", "tb1"):
        assert reasons[("rank:f", "f", "pass3", metric)] == BUILT_IN
        assert reasons[(FUSED, PANEL, "pass3", metric)] == BOTH_RANKERS
        assert reasons[("f", "rank:f", "ap1", metric)].startswith("repeats the row rank:f − f")
        assert reasons[("rank:f", "f", "ap1", metric)] == ""
    tested = table["excluded"] == ""
    assert tested.sum() == 2 * 5  # the ap@1 rows of the five pairs, on two prompts
    np.testing.assert_allclose(table.loc[tested, "q"], bh(table.loc[tested, "p"].to_numpy()))
    assert table.loc[~tested, "q"].isna().all()

    claims = pair_claims(table, family=LIKE_FOR_LIKE, dataset="vab", prefix="like-for-like")
    check_families(claims, declare(*correction_families()))
    out = [c for c in claims if c.excluded]
    assert len(out) == (~tested).sum()
    assert all(c.verdict == NOT_TESTED and c.family == "" for c in out)
    kept = [c for c in claims if not c.excluded]
    # the ledger's correction is the table's: BH over the tested rows alone
    np.testing.assert_allclose([c.q for c in kept], table.loc[tested, "q"])
    # with the built-in rows (a ranker's pass^3 sits near the bootstrap's floor) in the
    # family, the real rows' q would come out smaller: that is what leaving them out stops
    loose = bh(table["p"].to_numpy())[tested.to_numpy()]
    assert (loose <= table.loc[tested, "q"].to_numpy() + 1e-15).all()
    assert (loose < table.loc[tested, "q"].to_numpy() - 1e-9).any()


def test_a_count_is_read_off_q_never_off_intervals():
    # one interval clears zero by a hair but its q fails; one row passes
    table = pd.DataFrame({
        "a": ["r1", "r2", "r3", "r4"], "b": ["d"] * 4, "metric": ["top1"] * 4,
        "stat": ["ap1"] * 4, "delta": [0.066, -0.2, 0.01, -0.03],
        "ci_low": [1e-6, -0.3, -0.05, -0.09], "ci_high": [0.13, -0.1, 0.07, 0.03],
        "p": [0.0466, 0.0004, 0.6, 0.3], "excluded": ["", "", "", ""],
    })  # fmt: skip
    claims = pair_claims(table, family=LIKE_FOR_LIKE, dataset="vab", prefix="x")
    by_interval = int((table["ci_low"] > 0).sum())
    assert by_interval == 1
    assert claims[0].q > 0.05 and claims[0].verdict == NO_DIFFERENCE
    assert tally(claims, BEATS) == (0, 4, 2)  # none with q < 0.05; two by point estimate
    assert tally(claims, FALLS_BELOW) == (1, 4, 2)
    assert (
        count(*tally(claims, BEATS)[:2], point=2)
        == "0 of 4 with q < 0.05 (2 of 4 by point estimate alone)"
    )
    # an excluded row counts in none of k, n and the point-estimate count
    gone = table.assign(excluded=["", "equal by construction", "", ""])
    assert tally(
        pair_claims(gone, family=LIKE_FOR_LIKE, dataset="vab", prefix="x"), FALLS_BELOW
    ) == (0, 3, 1)


def test_an_interval_end_of_rounding_noise_is_zero():
    # differences in thirds whose lower percentile is 0 in exact arithmetic
    thirds = [2, 0, 0, 0, 1, -1, 0, 1, 0, 2, 0, 0, 0, 0, 1, 0, 2, 0, 1, 0, 1, 2, 0, -1, -1, -1,
              0, 0, 2, -1]  # fmt: skip
    d = np.array(thirds) / 3
    raw = mean_difference(d, n_resamples=200, seed=0)["ci_low"]
    assert raw != 0 and abs(raw) < 1e-12  # the sum left 3.6e-18 where 0 belongs
    a, b = np.clip(d, 0, None), np.clip(-d, 0, None)
    tasks = [f"t{i:02d}" for i in range(len(d))]  # sorted as given: the same resamples
    s = pd.DataFrame({
        "judge": ["a"] * len(d) + ["b"] * len(d), "task_id": tasks * 2,
        "metric": "top1", "ap1": np.concatenate([a, b]),
    })  # fmt: skip
    row = compare_judges(s, metric="top1", stat="ap1", n_resamples=200, seed=0).iloc[0]
    assert row.ci_low == 0.0


def test_the_leader_is_a_best_of_row_tested_against_all_the_others_at_once():
    scores = _world()
    rankers = ["rank:f", "rank:g", PANEL, FUSED]
    lead = leader_test(scores, rankers, n_resamples=400, seed=1)
    assert lead.leader == PANEL and sorted(lead.order) == sorted(rankers)
    tb = scores.loc[scores["metric"] == "tb1"].groupby("judge")["ap1"].mean()
    assert lead.margin == pytest.approx(tb[PANEL] - tb[lead.runner_up])
    claim = leader_claim(lead, id="leader:ranker", dataset="vab", noun="ranker")
    assert claim.kind == "best-of" and claim.family == "" and claim.metric == "TB-1 ap@1"
    assert claim.verdict == (LEADS if lead.p < 0.05 and lead.ci_low > 0 else HIGHEST_ONLY)
    # a leader whose margin clears no bar: highest by point estimate only, its rival named
    close = _scores({"x": np.tile([True, False, True], (30, 1)),
                     "y": np.tile([True, False, False], (30, 1))})  # fmt: skip
    tie = leader_test(close, ["x", "y"], n_resamples=200, seed=0)
    assert tie.leader == "x" and tie.margin == pytest.approx(1 / 3)


def test_the_primary_comparison_is_declared_and_averages_one_model_under_two_protocols():
    scores = _world()
    tab = primary_table(scores, ["f", "g"], n_resamples=300, seed=0)
    tb = scores.loc[scores["metric"] == "tb1"].groupby("judge")["ap1"].mean()
    expected = ((tb["rank:f"] - tb["f"]) + (tb["rank:g"] - tb["g"])) / 2
    assert tab.loc[0, "delta"] == pytest.approx(expected)
    assert tab.loc[0, "families"] == "f, g" and tab.loc[0, "n_tasks"] == 60
    claim = primary_claim(tab, dataset="vab")
    assert claim.family == "" and claim.role == "headline" and claim.id == "primary"
    assert claim.alternative == "two-sided" and claim.p == tab.loc[0, "p"]
    with pytest.raises(ValueError, match="no TB-1 scores"):
        primary_table(scores, ["f", "nobody"], n_resamples=10)


def test_a_family_against_itself_is_its_own_family():
    table = rank_vs_direct(_world(), PAIRS, n_resamples=300, seed=0)
    claims = like_for_like_claims(table, dataset="vab")
    assert [c.id for c in claims] == [
        c.id for c in pair_claims(table, family=LIKE_FOR_LIKE, dataset="vab",
                                  prefix="like-for-like")
    ]  # fmt: skip
    for c, r in zip(claims, table.itertuples(), strict=True):
        own = r.a == f"rank:{r.b}"
        assert c.family == ("" if r.excluded else OWN_PROTOCOL if own else LIKE_FOR_LIKE)
    for family in (OWN_PROTOCOL, LIKE_FOR_LIKE):
        inside = [c for c in claims if c.family == family]
        np.testing.assert_allclose([c.q for c in inside], bh(np.array([c.p for c in inside])))
    check_families(claims, declare(*correction_families()))


def _pair_preds(n=30, seed=0):
    """Pairs alone: a judge that picks the first slot, in random orders."""
    rng = np.random.default_rng(seed)
    rows, gold = [], []
    for t in range(n):
        gold.append({"task_id": f"p{t}", "k": 2, "domain": "photograph", "gold_best": "A",
                     "gold_worst": None})  # fmt: skip
        for r in range(3):
            order = ["A", "B"] if rng.random() < 0.5 else ["B", "A"]
            shown = ",".join(order)
            rows.append(vab_row(f"p{t}", "vab_top1", r, best=order[0], order=shown))
            rows.append(vab_row(f"p{t}", "vab_bot1", r, worst=order[1], order=shown))
    return pd.DataFrame(rows), pd.DataFrame(gold)


def test_rows_of_pairs_alone_that_repeat_another_leave_their_family():
    pred, gold = _pair_preds()
    pos = position_table(pred, gold, n_resamples=300)
    assert set(pos["slot"]) == {"first", "last"}
    last = pos["slot"] == "last"
    assert (pos.loc[last, "excluded"] == MIRROR).all() and pos.loc[last, "q"].isna().all()
    np.testing.assert_allclose(pos.loc[~last, "q"], bh(pos.loc[~last, "p"].to_numpy()))
    mirrored = pos.set_index(["kind", "slot"])["delta"]
    assert mirrored[("vab_top1", "last")] == pytest.approx(-mirrored[("vab_top1", "first")])
    claims = position_claims(pos, dataset="vab", orders="standard")
    assert [c.verdict == NOT_TESTED for c in claims] == list(last)
    assert all(c.in_points for c in claims)

    votes = vote_table(pred, gold, n_resamples=300)
    tb = votes["metric"] == "tb1"
    assert (votes.loc[tb, "excluded"] == PAIRS_ONLY).all() and votes.loc[tb, "q"].isna().all()
    np.testing.assert_allclose(votes.loc[~tb, "q"], bh(votes.loc[~tb, "p"].to_numpy()))
    vc = vote_claims(votes, dataset="vab")
    assert sum(c.verdict == NOT_TESTED for c in vc) == tb.sum()


def test_mixed_sizes_keep_first_and_last_slot_and_vote_rows_in_the_family():
    pred, gold = _pair_preds()
    three = pred.assign(task_id=pred["task_id"] + "x", order=pred["order"] + ",C")
    gold3 = gold.assign(task_id=gold["task_id"] + "x", k=3)
    both, gold_both = pd.concat([pred, three]), pd.concat([gold, gold3])
    pos = position_table(both, gold_both, n_resamples=200)
    middle = pos["slot"] == "middle"
    assert (pos.loc[middle, "excluded"] == SUMS_TO_ONE).all() and pos.loc[middle, "q"].isna().all()
    assert (pos.loc[~middle, "excluded"] == "").all() and pos.loc[~middle, "q"].notna().all()
    # the three excesses of a group sum to zero: the middle row is fixed by the other two
    sums = pos.groupby(["judge", "kind", "field"])["delta"].sum()
    np.testing.assert_allclose(sums, 0.0, atol=1e-9)
    votes = vote_table(both, gold_both, n_resamples=200)
    assert (votes["excluded"] == "").all()


def test_ap1_against_chance_is_tested_and_counted_by_q():
    rng = np.random.default_rng(0)
    hits = {"sharp": np.ones((40, 3), bool), "guess": rng.random((40, 3)) < 1 / 3}
    scores = _scores(hits)
    table = chance_table(scores, n_resamples=300, seed=0)
    row = table.set_index(["judge", "metric"]).loc[("sharp", "top1")]
    assert row.ap1 == 1.0 and row.chance == pytest.approx(1 / 3)
    assert row.delta == pytest.approx(2 / 3) and row.p < 0.01
    np.testing.assert_allclose(table["q"], bh(table["p"].to_numpy()))
    claims = chance_claims(table, dataset="vab")
    assert {c.b for c in claims} == {"chance"}
    np.testing.assert_allclose([c.q for c in claims], table["q"])
    k, n, _ = tally(claims, BEATS)
    assert n == 4 and k == sum(c.verdict == BEATS for c in claims) >= 2
    assert all(c.id.startswith("chance:") for c in claims)
    # a judge at chance by construction has no detectable difference
    guess = [c for c in claims if c.a == "guess"]
    assert all(c.verdict in (NO_DIFFERENCE, BEATS, FALLS_BELOW) for c in guess)
    assert not math.isnan(guess[0].q)


def test_the_declared_families_cover_every_claim_and_ids_are_ledger_safe():
    fams = declare(*correction_families())
    assert {OWN_PROTOCOL, LIKE_FOR_LIKE} <= set(fams)
    assert not {OWN_PROTOCOL, LIKE_FOR_LIKE} & {f.name for f in correction_families(rankers=False)}
    table = rank_vs_direct(_world(), PAIRS, n_resamples=200, seed=0)
    claims = pair_claims(table, family=LIKE_FOR_LIKE, dataset="vab", prefix="like-for-like")
    check_families(claims, fams)
    assert all(":" not in c.id.split(":", 1)[1].split("-vs-")[0] for c in claims)
    assert any(c.id.startswith("like-for-like:rank_fused-vs-rank_panel:") for c in claims)


def test_the_rows_a_headline_quotes_are_marked_as_such():
    table = rank_vs_direct(_world(), PAIRS, n_resamples=200, seed=0)
    claims = pair_claims(table, family=LIKE_FOR_LIKE, dataset="vab", prefix="like-for-like")
    other = Claim("elsewhere", "a", "b", "vab", "TB-1 ap@1", "tasks", 0.1, -0.1, 0.3, p=0.4)
    marked = as_headline(claims, claims[3], None, other)
    assert [c.role for c in marked] == ["headline" if i == 3 else "" for i in range(len(claims))]
    assert [c.verdict for c in marked] == [c.verdict for c in claims]
