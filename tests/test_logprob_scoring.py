"""``prompt_mode: logprob``: one call per image, family and prompt, read from its logprobs.

The reader is tested on hand-written choices (where the score token is, renormalising over
valid scores, each fallback), then a plan is scored against the simulated server: the
stored value is the expected score of the judge's own distribution, a model that sends no
logprobs falls back to its sampled answer, and the summary says how often.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from test_client import PRICES, make_images

from judgepanel.core.calls import KEY_FIELDS, CallKey, CallSpec
from judgepanel.core.client import run_calls
from judgepanel.core.config import Price, ScoringDesign
from judgepanel.core.endpoint import Endpoint
from judgepanel.core.parameters import StudyParameters
from judgepanel.core.providers import OPENAI
from judgepanel.core.score_logprobs import LogprobScoring, score_token
from judgepanel.core.sendconfig import ClientOptions
from judgepanel.core.store import Store
from judgepanel.report.verdict_check import VERDICT_WORDS
from judgepanel.studies.common.rubric_plan import (
    LOGPROB_CALL_TYPE_OF,
    LOGPROB_CALL_TYPES,
    plan_images,
)
from judgepanel.studies.fusion.logprob import logprob_summary
from judgepanel.studies.fusion.parameters import FusionParameters
from judgepanel.studies.fusion.plan import logprob_scoring
from judgepanel_sim.judges import inprocess
from judgepanel_sim.judges.protocol import parse_chat
from judgepanel_sim.judges.server import score_marginal, sim_request

ANSWER = '{"score": 7, "reason": "Crisp focus."}'
SPLIT = ["{", '"', "score", '"', ":", " 7", ",", ' "', "reason", '":', ' "Crisp focus."}']


def _choice(alts: dict[str, float], tokens: list[str] = SPLIT) -> dict:
    """A ``logprobs`` object whose score token (" 7") has alternatives ``alts``."""
    content = []
    for tok in tokens:
        entry = {"token": tok, "logprob": -0.01, "top_logprobs": []}
        if tok.strip() == "7":
            entry["logprob"] = math.log(alts.get(tok, 1e-9))
            entry["top_logprobs"] = [{"token": t, "logprob": math.log(p)} for t, p in alts.items()]
        content.append(entry)
    return {"content": content}


def test_the_expected_score_of_the_valid_scores():
    read = LogprobScoring(mode="processed")
    rec = read(ANSWER, _choice({" 7": 0.5, " 8": 0.2, "8": 0.1, " seven": 0.1, " 11": 0.05}))
    assert rec["source"] == "logprobs" and rec["fallback"] == ""
    assert rec["valid_mass"] == pytest.approx(0.8)  # " seven" and 11 are not valid scores
    assert rec["distribution"] == pytest.approx({"7": 0.5 / 0.8, "8": 0.3 / 0.8})
    assert rec["score"] == pytest.approx(7 + 0.3 / 0.8)
    assert rec["sampled"] == 7 and rec["logprobs_mode"] == "processed"


def test_fallbacks_keep_the_sampled_score_and_say_why():
    read = LogprobScoring(min_mass=0.5)
    none = read(ANSWER, None)
    assert (none["score"], none["source"], none["fallback"]) == (7, "sample", "no logprobs")
    low = read(ANSWER, _choice({" 7": 0.3, " The": 0.6}))
    assert low["source"] == "sample" and low["fallback"] == "valid mass 0.300 below 0.5"
    assert low["score"] == 7 and low["valid_mass"] == pytest.approx(0.3)


def test_a_score_split_over_tokens_falls_back():
    text = '{"score": 10, "reason": "Crisp focus."}'
    toks = ["{", '"', "score", '":', " 1", "0", ",", ' "', "reason", '":', ' "Crisp focus."}']
    choice = _choice({}, toks)
    choice["content"][4]["top_logprobs"] = [{"token": " 1", "logprob": -0.1}]
    rec = LogprobScoring()(text, choice)
    assert (rec["score"], rec["fallback"]) == (10, "score split over tokens")


def test_the_score_token_is_found_where_the_score_value_starts():
    text = '{"score": 7, "reason": "7 of 10"}'
    toks = ["{", '"', "score", '":', " 7", ",", ' "', "reason", '":', ' "', "7", " of", " 10", '"}']
    found = score_token(text, _choice({" 7": 0.9}, toks), 7, 1, 10)
    assert found is not None and found["token"] == " 7"
    # tokens that do not spell the text: the first that reads as the sampled score
    found = score_token(text, _choice({"7": 0.9}, ["x", "7"]), 7, 1, 10)
    assert found is not None and found["token"] == "7"


def test_request_extras_and_choice_logprobs_reach_the_client():
    key = CallKey("eva", "im0", "aurora", "sim-aurora-v1", "holistic", "", 0, 0.3, "", "")
    spec = CallSpec(key, list, str, extra_body=(("logprobs", True), ("model", "other")))
    body = json.loads(OPENAI.request_body(spec, [], 5))
    assert body["logprobs"] is True and body["model"] == "sim-aurora-v1"  # never replaced
    lp = {"content": [{"token": "7", "logprob": 0.0}]}
    (choice,) = OPENAI.choices({"choices": [{"message": {"content": "7"}, "logprobs": lp}]})
    assert choice.logprobs == lp


def test_logprob_mode_is_a_declared_parameter():
    assert FusionParameters().prompt_mode == "sample"
    assert logprob_scoring(FusionParameters().model_dump()) is None
    got = logprob_scoring({"prompt_mode": "logprob", "logprobs_mode": "raw"})
    assert got == LogprobScoring(mode="raw")
    with pytest.raises(ValueError, match="logprobs"):
        logprob_scoring({"prompt_mode": "logprobs"})  # misspelt: refused, not sampled
    with pytest.raises(ValueError):
        logprob_scoring({"prompt_mode": "logprob", "logprob_min_mass": 2})
    assert issubclass(FusionParameters, StudyParameters)


def test_a_logprob_plan_asks_each_prompt_once(tmp_path: Path):
    images = make_images(tmp_path / "img", 2)
    design = ScoringDesign(holistic_k=25, dimension_r=3, temperature=0.3)
    fams = {"aurora": "sim-aurora-v1"}
    sampled = plan_images(images, fams, design, dataset="eva")
    once = plan_images(images, fams, design, dataset="eva", logprob=LogprobScoring())
    assert len(sampled) == 2 * (25 + 5 * 3) and len(once) == 2 * (1 + 5)
    assert {s.key.call_type for s in once} == set(LOGPROB_CALL_TYPES)
    assert all(s.key.repetition == 0 and dict(s.extra_body)["top_logprobs"] == 20 for s in once)
    # the same prompts under the same key fields, the call type aside
    first = {(s.key.item, s.key.dimension): s.key for s in sampled if s.key.repetition == 0}
    for s in once:
        twin = first[(s.key.item, s.key.dimension)]
        assert s.key.prompt_hash == twin.prompt_hash and s.key.rubric_sha == twin.rubric_sha
        assert LOGPROB_CALL_TYPE_OF[twin.call_type] == s.key.call_type


def test_logprob_scoring_against_the_simulator(sim_server, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sim-local")
    images = make_images(tmp_path / "img", 3)
    families = {"aurora": "sim-aurora-v1", "ember": "sim-ember-v1"}  # ember sends none
    design = ScoringDesign(holistic_k=25, dimension_r=3, temperature=0.3)
    read = LogprobScoring(mode="processed")
    specs = plan_images(images, families, design, dataset="eva", logprob=read)
    prices = {**PRICES, "sim-ember-v1": Price(0.1, 0.4)}
    options = ClientOptions(endpoint=Endpoint.at(sim_server.base_url), progress=False)
    with Store(tmp_path / "s.sqlite") as store:
        summary = run_calls(specs, store, prices=prices, options=options)
        assert summary.ok == len(specs) == 3 * 2 * 6
        df = store.frame()
        again = run_calls(specs, store, prices=prices, options=options)
        assert (again.sent, again.skipped) == (0, len(specs))
    by_key = {s.key.as_tuple(): s for s in specs}
    for row in df.itertuples():
        rec = json.loads(row.parsed)
        spec = by_key[tuple(getattr(row, f) for f in KEY_FIELDS)]
        answer = inprocess.answer_text(spec)  # the sampled answer is what it always was
        assert json.loads(row.answer)["score"] == json.loads(answer)["score"] == rec["sampled"]
        if row.family == "ember":
            assert (rec["source"], rec["fallback"]) == ("sample", "no logprobs")
            assert row.value == rec["sampled"]
            continue
        req = sim_request(parse_chat(inprocess.request_body(spec)), 0)
        probs = score_marginal(req).probabilities()
        assert rec["source"] == "logprobs" and rec["valid_mass"] == pytest.approx(1.0)
        assert row.value == pytest.approx(sum(k * p for k, p in probs.items()), abs=1e-9)
        assert rec["logprobs_mode"] == "processed"
    table = logprob_summary(df).set_index(["family", "kind"])
    assert table.loc[("aurora", "holistic_logprob"), "fallbacks"] == 0
    ember = table.loc[("ember", "dimension_logprob")]
    assert (ember["calls"], ember["fallbacks"], ember["fallback_share"]) == (15, 15, 1.0)
    assert ember["fallback_reasons"] == "no logprobs x15"


def test_the_designs_compared_on_a_scored_store(sim_server, tmp_path: Path, monkeypatch):
    from judgepanel.studies.fusion import logprob_designs as lpd

    monkeypatch.setenv("OPENAI_API_KEY", "sim-local")
    images = make_images(tmp_path / "img", 12)
    families = {"aurora": "sim-aurora-v1", "ember": "sim-ember-v1"}
    design = ScoringDesign(holistic_k=5, dimension_r=0, temperature=0.3)
    specs = plan_images(images, families, design, dataset="eva", call_types=("holistic",))
    specs += plan_images(
        images, families, design, dataset="eva", call_types=("holistic",), logprob=LogprobScoring()
    )
    prices = {**PRICES, "sim-ember-v1": Price(0.1, 0.4)}
    options = ClientOptions(endpoint=Endpoint.at(sim_server.base_url), progress=False)
    with Store(tmp_path / "s.sqlite") as store:
        assert run_calls(specs, store, prices=prices, options=options).ok == len(specs)
        calls = store.frame()
    scores = lpd.design_scores(calls, 5, 0.3)
    designs = ["one sample", "mean of 2", "mean of 5", lpd.EXPECTED]
    assert sorted(set(scores["design"])) == sorted(designs)
    assert (scores.groupby(["family", "design"]).size() == 12).all()
    human = pd.Series(range(12), index=images["image_id"], dtype=float)  # any ranking will do
    acc = lpd.design_accuracy(scores, human, n_resamples=200, seed=0)
    assert len(acc) == 2 * 4 * 2
    assert (acc["ci_low"] <= acc["estimate"]).all() and (acc["estimate"] <= acc["ci_high"]).all()
    ref = acc[acc["design"] == lpd.EXPECTED]
    assert ref["delta"].isna().all() and acc[acc["design"] != lpd.EXPECTED]["delta"].notna().all()
    costs = lpd.design_costs(calls, scores).set_index(["family", "design"])
    one, five = costs.loc[("aurora", "one sample")], costs.loc[("aurora", "mean of 5")]
    assert five["usd_per_1000_images"] == pytest.approx(5 * one["usd_per_1000_images"])
    shares = lpd.fallback_shares(calls)
    assert shares.to_dict() == {"aurora": 0.0, "ember": 1.0}
    text = lpd.describe_designs(costs.reset_index(), shares, 5, {"aurora": "<aurora's row>"})
    assert "for each family whose model sent logprobs: aurora, <aurora's row>." in text
    assert "ember sent none" in text
    versus = pd.DataFrame({"family": ["aurora", "ember"], "design": ["mean of 5"] * 2,
                           "delta": [0.012, -0.3], "ci_low": [-0.02, -0.5],
                           "ci_high": [0.05, -0.1]})  # fmt: skip
    head = lpd.versus_most_headline("d", versus, shares, "mean of 5")
    # numbers only, and only the families that sent logprobs (ember sent none)
    assert "the 1 family whose model sent logprobs: aurora +0.012 [−0.020, +0.050]" in head
    assert "ember" not in head and not VERDICT_WORDS.search(head)


def test_logprob_calls_sent_in_batches_store_what_they_store_online(
    sim_server, tmp_path: Path, monkeypatch
):
    """The demo scores its logprob run through the batch API: its lines carry the extra
    fields, and the answers are read with their logprobs as online."""
    from judgepanel.core.batch import BatchOptions, run_batches

    monkeypatch.setenv("OPENAI_API_KEY", "sim-local")
    images = make_images(tmp_path / "img", 2)
    families = {"aurora": "sim-aurora-v1", "ember": "sim-ember-v1"}
    design = ScoringDesign(holistic_k=5, dimension_r=1, temperature=0.3)
    specs = plan_images(images, families, design, dataset="eva", logprob=LogprobScoring())
    prices = {**PRICES, "sim-ember-v1": Price(0.1, 0.4)}
    options = ClientOptions(endpoint=Endpoint.at(sim_server.base_url), progress=False)
    columns = ["item", "family", "kind", "dimension", "value", "parsed", "answer", "status"]
    with Store(tmp_path / "online.sqlite") as store:
        run_calls(specs, store, prices=prices, options=options)
        online = store.frame(columns=columns)
    with Store(tmp_path / "batch.sqlite") as store:
        summary = run_batches(
            specs, store, prices=prices, options=options, batch=BatchOptions(poll_s=0.05)
        )
        assert summary.ok == len(specs) and summary.failed == 0
        batched = store.frame(columns=columns)
    pd.testing.assert_frame_equal(online, batched)
    sources = {json.loads(p)["source"] for p in batched["parsed"]}
    assert sources == {"logprobs", "sample"}  # ember sends none, aurora does
