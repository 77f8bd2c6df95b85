"""Alpha's interval and a judge's agreement from kept draw counts give the numbers of
draws made block by block, bit for bit; a judge's agreement asked for fewer metrics gives
the same rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgepanel.stats import bootstrap as bs
from judgepanel.stats.agreement import judge_agreement
from judgepanel.stats.reliability import alpha_interval


def _people_and_judge(n: int, seed: int) -> tuple[pd.DataFrame, pd.Series]:
    """Five people rating n images on 1-5 with gaps, and a judge on 1-10."""
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=n)
    rows = [
        {
            "image_id": f"im{i:03d}",
            "rater": f"r{r}",
            "score": float(np.clip(round(3 + latent[i] + rng.normal(0, 0.8)), 1, 5)),
        }
        for i in range(n)
        for r in range(5)
        if rng.random() > 0.3
    ]
    judge = pd.Series(
        np.clip(np.round(5.5 + 2 * latent + rng.normal(0, 1.5, n)), 1, 10),
        index=[f"im{i:03d}" for i in range(n)],
    )
    return pd.DataFrame(rows), judge


@pytest.mark.parametrize("level", ["interval", "ordinal", "nominal"])
def test_alpha_interval_from_kept_draws_equals_drawn_blocks(monkeypatch, level):
    people, _ = _people_and_judge(90, 1)
    monkeypatch.setattr("judgepanel.stats.reliability._ALPHA_CHUNK_CELLS", 7 * 120)
    bs.DRAWN.clear()
    with bs.DRAWN.disabled():
        drawn = alpha_interval(people, level, n_resamples=103, seed=3)
    kept = alpha_interval(people, level, n_resamples=103, seed=3)
    again = alpha_interval(people, level, n_resamples=103, seed=3)
    assert bs.DRAWN.misses == 1 and bs.DRAWN.hits == 1
    assert kept == drawn and again == drawn
    assert drawn.ci_low < drawn.estimate < drawn.ci_high


def test_judge_agreement_from_kept_draws_and_for_fewer_metrics():
    people, judge = _people_and_judge(80, 2)
    args = {"scale": (1, 5), "n_resamples": 211, "seed": 6}
    bs.DRAWN.clear()
    with bs.DRAWN.disabled(), bs.RESAMPLED.disabled(), bs.TARGETS.disabled():
        drawn = judge_agreement(judge, people, **args)
    assert list(drawn["metric"]) == ["spearman", "kendall_b", "qwk", "alpha_interval", "bias"]
    kept = judge_agreement(judge, people, **args)
    pd.testing.assert_frame_equal(kept, drawn, check_exact=True)
    fewer = judge_agreement(judge, people, metrics=("qwk", "spearman", "bias"), **args)
    want = drawn[drawn["metric"].isin(["spearman", "qwk", "bias"])].reset_index(drop=True)
    pd.testing.assert_frame_equal(fewer, want, check_exact=True)
    with pytest.raises(ValueError, match=r"metrics must be among .*\['tau'\]"):
        judge_agreement(judge, people, metrics=("qwk", "tau"), **args)
