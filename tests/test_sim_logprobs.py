"""The simulator's score logprobs are the distribution its judges sample from.

For a rubric answer, the score token's ``top_logprobs`` (asked for over HTTP) are compared
with the frequencies of the scores that 2,000 requests with distinct seeds sample (answered
in-process, as the server answers; ``tests/test_inprocess.py`` checks they agree) by a
chi-square goodness-of-fit test. The test has power: the same samples reject another
image's distribution, and the pre-temperature distribution (the "raw" logprobs some
servers report by default).
"""

from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np
import pytest
from openai import OpenAI
from scipy import stats

from judgepanel.core.parsing import parse_score
from judgepanel.core.prompts import bytes_data_url
from judgepanel.core.rubric import load_rubric
from judgepanel_sim.judges import marginal
from judgepanel_sim.judges.families import FAMILIES
from judgepanel_sim.judges.logprobs import answer_logprobs
from judgepanel_sim.judges.marginal import NODES, ScoreMarginal
from judgepanel_sim.judges.protocol import RawJSON, compact_json, parse_chat
from judgepanel_sim.judges.server import answer_chat, score_marginal, sim_request

DRAWS = 2000
TEMPERATURE = 0.3
SERVER_SEED = 0  # the ``sim_server`` fixture's


@pytest.fixture(scope="module")
def urls(make_jpeg) -> list[str]:
    """A scene, the same scene blurred (another image, with another distribution), and a
    second scene."""
    jpegs = [make_jpeg(1), make_jpeg(1, blur=2.0), make_jpeg(2)]
    return [bytes_data_url(j, "image/jpeg") for j in jpegs]


def _body(model: str, messages: list, **fields) -> dict:
    return {"model": model, "messages": messages, "temperature": TEMPERATURE, **fields}


def _reported(server, body: dict) -> dict[int, float]:
    """Score -> probability, from the score token of one answer over HTTP."""
    client = OpenAI(base_url=server.base_url, api_key="test", max_retries=0)
    r = client.chat.completions.create(**body, seed=1, logprobs=True, top_logprobs=20)
    score = next(t for t in r.choices[0].logprobs.content if t.token.strip().isdigit())
    return {int(a.token): math.exp(a.logprob) for a in score.top_logprobs}


def _sampled(body: dict) -> Counter:
    """Scores sampled by ``DRAWS`` requests that differ only in their seed."""
    out: Counter = Counter()
    for seed in range(DRAWS):
        answer = answer_chat(parse_chat({**body, "seed": 10_000 + seed}), SERVER_SEED)
        out[int(parse_score(answer)["score"])] += 1
    return out


def rubric_dim(kind: str) -> str | None:
    """The rubric dimension a test prompt of ``kind`` asks about."""
    return "colour" if kind == "dimension" else None


def goodness_of_fit(counts: Counter, probs: dict[int, float]) -> tuple[float, float]:
    """Chi-square statistic and p of ``counts`` against ``probs``, pooling the scores whose
    expected count is below 5 into one bin (a score sampled but given no mass is one too)."""
    n = sum(counts.values())
    scores = sorted(set(probs) | set(counts))
    big = [k for k in scores if probs.get(k, 0.0) * n >= 5]
    observed = [counts[k] for k in big]
    expected = [probs[k] * n for k in big]
    rest_expected = n - sum(expected)
    if rest_expected > 1e-9:
        observed.append(n - sum(observed))
        expected.append(rest_expected)
    elif n - sum(observed) > 0:  # sampled where the distribution puts no mass at all
        return math.inf, 0.0
    stat, p = stats.chisquare(observed, np.array(expected) * n / sum(expected))
    return float(stat), float(p)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("model", "kind"), [("sim-aurora-v1", "holistic"), ("sim-cobalt-v1", "dimension")]
)
def test_reported_probabilities_are_sampled_frequencies(sim_server, urls, model, kind):
    rubric = load_rubric()
    messages = [rubric.messages(kind, rubric_dim(kind) or "", u) for u in urls]
    bodies = [_body(model, m, max_tokens=200) for m in messages]
    reported = _reported(sim_server, bodies[0])
    assert sum(reported.values()) == pytest.approx(1.0, abs=1e-9)  # ten scores, all listed
    counts = _sampled(bodies[0])
    stat, p = goodness_of_fit(counts, reported)
    print(f"{model} {kind}: chi2 {stat:.2f}, p {p:.3f}, {DRAWS} draws")
    assert p > 0.01

    # Power: the same draws reject a wrong distribution.
    stat_other, p_other = goodness_of_fit(counts, _reported(sim_server, bodies[1]))
    print(f"  against the blurred image's: chi2 {stat_other:.1f}, p {p_other:.2g}")
    assert p_other < 1e-6
    req = sim_request(parse_chat(bodies[0]), SERVER_SEED)
    image = req.images[0]
    z0, _ = req.family.impression(image.features, image.digest, rubric_dim(kind), TEMPERATURE)
    logits = np.array(req.family.score_logits(z0, 1, 10))
    raw = np.exp(logits - logits.max())  # pre-temperature, as vLLM's default "raw" logprobs
    raw /= raw.sum()
    stat_raw, p_raw = goodness_of_fit(counts, {k + 1: float(v) for k, v in enumerate(raw)})
    print(f"  against the pre-temperature distribution: chi2 {stat_raw:.1f}, p {p_raw:.2g}")
    assert p_raw < 1e-6


def test_the_grid_is_converged(urls):
    chat = parse_chat(_body("sim-ember-v1", load_rubric().holistic_messages(urls[0])))
    req = sim_request(chat, SERVER_SEED)
    image = req.images[0]
    args = (req.family, image.features, image.digest, None, 1, 10, TEMPERATURE)
    coarse = marginal.score_marginal(*args).probabilities()
    fine = marginal._marginal(*args, nodes=4 * marginal.NODES - 3).probabilities()
    assert max(abs(coarse[k] - fine[k]) for k in coarse) < 1e-9
    assert sum(coarse.values()) == pytest.approx(1.0, abs=1e-12)


def test_the_marginal_draws_nothing_and_is_repeatable(urls):
    chat = parse_chat(_body("sim-dune-v1", load_rubric().holistic_messages(urls[0]), seed=4))
    req = sim_request(chat, SERVER_SEED)
    before = req.rng.bit_generator.state
    first = score_marginal(req)
    assert req.rng.bit_generator.state == before
    marginal._MEMO._data.clear()
    marginal._WORKED_OUT._data.clear()
    assert score_marginal(req) == first


def test_temperature_zero_is_a_point_mass_on_the_answer(sim_server, urls):
    body = {**_body("sim-basalt-v1", load_rubric().holistic_messages(urls[0])), "temperature": 0}
    client = OpenAI(base_url=sim_server.base_url, api_key="test", max_retries=0)
    r = client.chat.completions.create(**body, logprobs=True, top_logprobs=3)
    token = next(t for t in r.choices[0].logprobs.content if t.token.strip().isdigit())
    assert int(token.token) == parse_score(r.choices[0].message.content)["score"]
    assert token.logprob == 0.0
    assert token.top_logprobs[0].token == token.token
    assert [a.logprob for a in token.top_logprobs[1:]] == [marginal.LOGPROB_FLOOR] * 2


def test_every_family_has_a_proper_distribution_at_study_temperature(urls):
    rubric = load_rubric()
    for family in FAMILIES.values():
        chat = parse_chat(_body(family.model_id, rubric.holistic_messages(urls[2])))
        probs = score_marginal(sim_request(chat, SERVER_SEED)).probabilities()
        assert sorted(probs) == list(range(1, 11))
        assert sum(probs.values()) == pytest.approx(1.0, abs=1e-12)
        assert all(0.0 <= p <= 1.0 for p in probs.values())


@pytest.mark.parametrize(("lo", "hi"), [(1, 10), (0, 9), (1, 5), (0, 100)])
def test_the_whole_grid_equals_the_node_by_node_reference_bit_for_bit(lo, hi):
    """The marginal's log-softmax over the whole grid at once gives the bits that each
    impression's own `score_logits` gives, so logprobs never depend on the fast path."""
    rng = np.random.default_rng(lo * 1000 + hi)
    x, _ = marginal._grid()
    for family in FAMILIES.values():
        for _ in range(8):
            z0, sd = float(rng.normal(0, 1.5)), float(abs(rng.normal(0.5, 0.4))) + 1e-3
            temperature = float(rng.choice([0.1, 0.3, 1.0, 1.3]))
            ref = marginal.node_log_softmax(family, z0, sd, lo, hi, temperature)
            fast = marginal._log_softmax_rows(
                family.score_logits_grid(z0 + sd * x, lo, hi), temperature
            )
            assert np.array_equal(ref.view(np.int64), fast.view(np.int64))


def _answer_cases() -> list[tuple[str, ScoreMarginal | None, bool]]:
    """Answers of every shape the handlers write, with and without a score distribution."""
    peaked = ScoreMarginal(1, tuple(math.log(p) for p in [0.05] * 8 + [0.3, 0.3]))
    point = ScoreMarginal(1, tuple(0.0 if k == 7 else -math.inf for k in range(10)))
    texts = [
        '{"score": 7, "reason": "A cluttered frame and an awkwardly placed subject."}',
        'Score: 9/10 — très lumineux, {braces} and 100% "quotes"\n',
        "B",
        "The best is C, the worst is A.",
        "8",
        "",
    ]
    return [
        (text, dist, truncated)
        for text in texts
        for dist in (None, peaked, point)
        for truncated in (False, True)
    ]


def test_logprobs_written_as_json_are_the_encoded_entries():
    """The JSON a batch line or an answer carries is written from cached pieces: the same
    text the encoder writes of the entries, after the same draws, for every top and
    temperature, with a score token or without, cut or not."""
    checked = 0
    for text, dist, truncated in _answer_cases():
        for top in (0, 1, 3, 20):
            for temperature in (0.0, 0.3, 1.3):
                a, b = np.random.default_rng(checked), np.random.default_rng(checked)
                written = answer_logprobs(text, top, a, temperature, dist, truncated, as_json=True)
                entries = answer_logprobs(text, top, b, temperature, dist, truncated)
                assert isinstance(written, RawJSON)
                assert written.text == json.dumps(
                    entries, separators=(",", ":"), ensure_ascii=False
                )
                assert a.bit_generator.state == b.bit_generator.state
                checked += 1
    assert checked == 6 * 3 * 2 * 4 * 3


def test_a_non_finite_logprob_is_written_as_the_encoder_writes_it():
    odd = ScoreMarginal(1, (math.nan,) + (-1.0,) * 9)
    text = '{"score": 1, "reason": "x"}'
    written = answer_logprobs(text, 3, np.random.default_rng(1), 0.3, odd, as_json=True)
    entries = answer_logprobs(text, 3, np.random.default_rng(1), 0.3, odd)
    assert isinstance(written, RawJSON) and "NaN" in written.text
    assert written.text == json.dumps(entries, separators=(",", ":"), ensure_ascii=False)


def test_a_raw_value_is_put_in_the_body_as_it_is():
    raw = RawJSON('[{"token":"7","logprob":-0.5}]')
    body = {"a": [1, {"content": raw}], "b": "é"}
    expect = {"a": [1, {"content": json.loads(raw.text)}], "b": "é"}
    plain = json.dumps(expect, separators=(",", ":"), ensure_ascii=False).encode()
    assert compact_json(body) == plain
    # a text of the body that reads like the placeholder: written the plain way
    lookalike = {**body, "c": "\ue000raw0\ue000"}
    assert (
        compact_json(lookalike)
        == json.dumps(
            {**expect, "c": "\ue000raw0\ue000"}, separators=(",", ":"), ensure_ascii=False
        ).encode()
    )


def test_marginals_worked_out_together_have_the_bits_of_each_alone():
    """A batch slice's distributions, worked out on one stacked grid, equal each one worked
    out alone bit for bit, on every scale and family; and once worked out they are found."""
    rng = np.random.default_rng(5)
    for family in FAMILIES.values():
        for lo, hi in [(1, 10), (0, 9), (1, 5), (0, 100)]:
            temperature = float(rng.choice([0.1, 0.3, 1.0]))
            z0s = rng.normal(0, 1.5, 8).tolist()
            sds = (np.abs(rng.normal(0.5, 0.4, 8)) + 1e-3).tolist()
            together = marginal._gaussian_rows(family, z0s, sds, lo, hi, temperature, NODES)
            for z0, sd, made in zip(z0s, sds, together, strict=True):
                alone = marginal._gaussian_rows(family, [z0], [sd], lo, hi, temperature, NODES)
                bits = np.array(made.logprobs).view(np.int64)
                assert np.array_equal(bits, np.array(alone[0].logprobs).view(np.int64))
            asked = zip(z0s, sds, strict=True)
            marginal.precompute((family, z0, sd, lo, hi, temperature) for z0, sd in asked)
            found = marginal.gaussian_marginal(family, z0s[3], sds[3], lo, hi, temperature)
            assert found is marginal._WORKED_OUT.get(
                (family,), (z0s[3], sds[3], lo, hi, temperature, NODES)
            )
            assert found == together[3]
