"""Reading a judge's score distribution from the log-probabilities of its score token.

One request with ``logprobs: true, top_logprobs: 20`` returns, at the score token, the
distribution that repeated calls would sample (if the provider reports the probabilities
its sampler uses; see ``LOGPROBS_MODES``). Its expected score stands in for the mean of
many sampled answers. The answer is still parsed as usual: an unreadable one is re-asked,
and its score (one sample) is kept beside the distribution.

The score token is the token at which the answer's ``"score"`` value starts. Its
alternatives that read as an integer on the scale (``"7"``, ``" 7"``) make the
distribution, renormalised over their *valid mass*. The scale's numbers must be single
tokens: with a tokenizer that splits numbers into digits, ``"1"`` may begin ``"10"``, so an
answer whose score spans more than its token falls back, and a 1-10 scale there conflates
1 with 10 (a 0-9 scale does not). Where the choice has no logprobs, no score token is
found, the score spans several tokens, or the valid mass is below ``min_mass``, the record
falls back to the sampled score and says why.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Literal

from judgepanel.core.parsing import SCORE_MAX, SCORE_MIN, parse_score

LOGPROBS_MODES: tuple[str, ...] = ("processed", "raw", "unknown")
"""What a provider's logprobs describe: ``processed``, the distribution it samples from
(after temperature); ``raw``, the model's before temperature (vLLM's default
``logprobs_mode``); ``unknown`` when it does not say."""

LogprobsMode = Literal["processed", "raw", "unknown"]

TOP_LOGPROBS = 20
"""Alternatives asked for per token (the OpenAI API's maximum)."""

MIN_VALID_MASS = 0.5
"""Default share of the score token's mass that must fall on valid scores."""

_SCORE_VALUE = re.compile(r'"score"\s*:\s*"?\s*(?=[-\d])')


def _score_offset(text: str) -> int | None:
    """Where the last ``"score"`` value of ``text`` starts (the parser's last candidate)."""
    found = list(_SCORE_VALUE.finditer(text))
    return found[-1].end() if found else None


def _tokens(logprobs: Any) -> list[dict[str, Any]]:
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    return [t for t in content if isinstance(t, dict)] if isinstance(content, list) else []


def _as_score(token: Any, lo: int, hi: int) -> int | None:
    core = token.strip().strip('"') if isinstance(token, str) else ""
    if not (core.isascii() and core.isdigit()):
        return None
    value = int(core)
    return value if lo <= value <= hi else None


def score_token(text: str, logprobs: Any, sampled: float, lo: int, hi: int) -> dict | None:
    """The entry of ``logprobs["content"]`` that holds the answer's score, or ``None``.

    Found by character offset where the tokens spell the text, else as the first token
    that reads as the sampled score.
    """
    tokens = _tokens(logprobs)
    offset = _score_offset(text)
    if offset is not None and "".join(str(t.get("token", "")) for t in tokens) == text:
        pos = 0
        for t in tokens:
            piece = str(t.get("token", ""))
            if pos + len(piece) > offset and piece.strip():
                return t if _as_score(piece, lo, hi) is not None else None
            pos += len(piece)
        return None
    return next((t for t in tokens if _as_score(t.get("token"), lo, hi) == sampled), None)


def score_distribution(token: dict, lo: int, hi: int) -> tuple[dict[int, float], float]:
    """Score -> probability among the token and its alternatives (unnormalised), and the
    valid mass (their sum, at most 1)."""
    seen: dict[str, float] = {}
    for alt in [token, *(token.get("top_logprobs") or [])]:
        if not isinstance(alt, dict):
            continue
        name, lp = alt.get("token"), alt.get("logprob")
        if isinstance(name, str) and isinstance(lp, int | float) and not isinstance(lp, bool):
            seen.setdefault(name, math.exp(float(lp)) if math.isfinite(lp) else 0.0)
    dist: dict[int, float] = {}
    for name, p in seen.items():
        score = _as_score(name, lo, hi)
        if score is not None:
            dist[score] = dist.get(score, 0.0) + p
    return dist, min(1.0, sum(dist.values()))


@dataclass(frozen=True)
class LogprobScoring:
    """Reads one logprob call's answer (a CallSpec's ``parse_choice``).

    Attributes:
        lo, hi: the score scale.
        min_mass: below this valid mass the distribution is not used.
        mode: what the provider's logprobs describe (one of ``LOGPROBS_MODES``), recorded
            in every record so that a page can say so.
    """

    lo: int = SCORE_MIN
    hi: int = SCORE_MAX
    min_mass: float = MIN_VALID_MASS
    mode: LogprobsMode = "unknown"

    def __call__(self, text: str, logprobs: Any) -> dict[str, Any]:
        """The record: ``score`` is the expected score, or the sampled one on fallback.

        Keys: score, sampled, source (``logprobs`` or ``sample``), fallback (why not, or
        ``""``), distribution (score -> probability, renormalised; ``None`` on fallback),
        valid_mass, logprobs_mode and the answer's reason.

        Raises:
            AnswerError: the answer states no valid score (re-asked like any other).
        """
        parsed = parse_score(text, lo=self.lo, hi=self.hi)
        sampled = parsed["score"]
        record: dict[str, Any] = {
            "score": sampled,
            "sampled": sampled,
            "source": "sample",
            "fallback": "",
            "distribution": None,
            "valid_mass": None,
            "logprobs_mode": self.mode,
            "reason": parsed.get("reason"),
        }
        if not _tokens(logprobs):
            record["fallback"] = "no logprobs"
            return record
        token = score_token(text, logprobs, sampled, self.lo, self.hi)
        if token is None:
            record["fallback"] = "no score token"
            return record
        if _as_score(token.get("token"), self.lo, self.hi) != sampled:
            record["fallback"] = "score split over tokens"
            return record
        dist, mass = score_distribution(token, self.lo, self.hi)
        record["valid_mass"] = mass
        if mass < self.min_mass or mass <= 0:
            record["fallback"] = f"valid mass {mass:.3f} below {self.min_mass:g}"
            return record
        probs = {k: p / sum(dist.values()) for k, p in sorted(dist.items())}
        record.update(
            score=sum(k * p for k, p in probs.items()),
            source="logprobs",
            distribution={str(k): p for k, p in probs.items()},
        )
        return record
