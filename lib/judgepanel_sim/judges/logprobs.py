"""Token log-probabilities for a simulated answer, in the chat-completions shape.

The text is cut into tokens (a word, a number or a punctuation mark with its leading
space). The score token of a rubric answer (its first integer on the asked scale) carries
the judge's true distribution: ``top_logprobs`` lists the most likely scores of
:func:`judgepanel_sim.judges.marginal.score_marginal`, the distribution the score was
drawn from, so the reported probabilities are the frequencies of the scores it samples.
Every other token is described after the fact: it is the most likely one at its position,
``top_logprobs`` lists it first with the same log-probability, then alternatives (other
panel letters for a letter) with less mass. The probabilities at one position never sum
to more than one.

Each token draws one uniform from the request's generator whether or not it is the score
token, so the answers that follow in a request with ``n`` are sampled as before.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import numpy as np

from judgepanel_sim import portable as P
from judgepanel_sim.judges.marginal import ScoreMarginal

_TOKEN = re.compile(r"\s*\w+|\s*[^\w\s]|\s+")
_LETTERS = "ABCDEFGH"


def tokens(text: str) -> list[str]:
    """The answer cut into tokens; joined they give the text back."""
    return _TOKEN.findall(text)


@lru_cache(maxsize=8192)
def _alternatives(token: str, k: int) -> tuple[str, ...]:
    """Up to ``k`` plausible other tokens at the same position, never ``token`` itself
    (remembered: answers repeat their words)."""
    core = token.strip()
    lead = token[: len(token) - len(token.lstrip())]
    if len(core) == 1 and core in _LETTERS:
        pool = [lead + c for c in _LETTERS if c != core]
    else:
        pool = [lead + v for v in (core.lower(), core.upper(), core.capitalize())]
        pool += [core, " " + core, token + "s", token + "."]
    out: list[str] = []
    for cand in pool:
        if cand != token and cand not in out:
            out.append(cand)
    return tuple(out[:k])


@lru_cache(maxsize=8192)
def _utf8(token: str) -> tuple[int, ...]:
    return tuple(token.encode("utf-8"))


def _entry(token: str, logprob: float) -> dict[str, Any]:
    return {"token": token, "logprob": logprob, "bytes": list(_utf8(token))}


def _score_entry(token: str, marginal: ScoreMarginal, top: int) -> dict[str, Any]:
    """The score token's entry: its own log-probability and the ``top`` likeliest scores."""
    lead = token[: len(token) - len(token.lstrip())]
    entry = _entry(token, marginal.logprob(int(token.strip())))
    entry["top_logprobs"] = [_entry(f"{lead}{k}", lp) for k, lp in marginal.top(top)]
    return entry


def _is_score(token: str, marginal: ScoreMarginal) -> bool:
    core = token.strip()
    return core.isascii() and core.isdigit() and marginal.lo <= int(core) <= marginal.hi


def answer_logprobs(
    text: str,
    top: int,
    rng: np.random.Generator,
    temperature: float,
    marginal: ScoreMarginal | None = None,
    truncated: bool = False,
) -> list[dict[str, Any]]:
    """``choices[i].logprobs.content`` for ``text``: one entry per token.

    Args:
        text: the sampled answer.
        top: alternatives asked for (``top_logprobs``).
        rng: draws each position's confidence (one uniform per token).
        temperature: higher temperature spreads the mass (lower top probability).
        marginal: the distribution the answer's score was drawn from, for its score token
            (``None``: no token is a score).
        truncated: the answer was cut; a number at its very end may be a cut score.
    """
    spread = min(1.0, 0.15 + 0.35 * max(temperature, 0.0))
    toks = tokens(text)
    # One uniform per token, drawn in order (as many scalar draws give); each position's
    # probability and its alternatives' masses, whose logs are taken in one array call
    # (`judgepanel_sim.portable.log` gives the bits `log_scalar` gives, far cheaper).
    draws = rng.random(len(toks)).tolist()
    score_at = -1
    if marginal is not None:
        last = len(toks) - 1
        score_at = next(
            (
                i
                for i, t in enumerate(toks)
                if _is_score(t, marginal) and not (truncated and i == last)
            ),
            -1,
        )
    masses: list[float] = []
    shapes: list[tuple[str, tuple[str, ...]]] = []
    for i, tok in enumerate(toks):
        p = min(max(1.0 - spread * draws[i], 0.5), 0.9999)
        alts = () if i == score_at else _alternatives(tok, max(0, top - 1))
        shapes.append((tok, alts))
        if i != score_at:
            rest = 1.0 - p
            masses.append(p)
            masses.extend(rest * 0.5 ** (j + 1) for j in range(len(alts)))
    logs = iter(P.log(np.array(masses)).tolist()) if masses else iter(())
    out = []
    for i, (tok, alts) in enumerate(shapes):
        if i == score_at:
            out.append(_score_entry(tok, marginal, top))  # type: ignore[arg-type]
            continue
        lp = next(logs)
        entry = _entry(tok, lp)
        listed = [_entry(tok, lp)] + [_entry(alt, next(logs)) for alt in alts]
        entry["top_logprobs"] = listed[:top]
        out.append(entry)
    return out
