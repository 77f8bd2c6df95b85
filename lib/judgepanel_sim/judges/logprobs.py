"""Token log-probabilities for a simulated answer, in the chat-completions shape.

The answer is already sampled when these are made, so they describe it: the text is cut
into tokens (a word or a punctuation mark with its leading space), each token is the
most likely one at its position, and ``top_logprobs`` lists it first with the same
log-probability, then alternatives (other panel letters for a letter) with less mass.
The probabilities at one position never sum to more than one.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from judgepanel_sim import portable as P

_TOKEN = re.compile(r"\s*\w+|\s*[^\w\s]|\s+")
_LETTERS = "ABCDEFGH"


def tokens(text: str) -> list[str]:
    """The answer cut into tokens; joined they give the text back."""
    return _TOKEN.findall(text)


def _alternatives(token: str, k: int) -> list[str]:
    """Up to ``k`` plausible other tokens at the same position, never ``token`` itself."""
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
    return out[:k]


def _entry(token: str, logprob: float) -> dict[str, Any]:
    return {"token": token, "logprob": logprob, "bytes": list(token.encode("utf-8"))}


def answer_logprobs(
    text: str, top: int, rng: np.random.Generator, temperature: float
) -> list[dict[str, Any]]:
    """``choices[i].logprobs.content`` for ``text``: one entry per token.

    Args:
        text: the sampled answer.
        top: alternatives asked for (``top_logprobs``); the sampled token is the first.
        rng: draws each position's confidence.
        temperature: higher temperature spreads the mass (lower top probability).
    """
    out = []
    spread = min(1.0, 0.15 + 0.35 * max(temperature, 0.0))
    for tok in tokens(text):
        p = float(np.clip(1.0 - spread * rng.random(), 0.5, 0.9999))
        lp = P.log_scalar(p)
        entry = _entry(tok, lp)
        alts = [_entry(tok, lp)]
        rest = 1.0 - p
        for i, alt in enumerate(_alternatives(tok, max(0, top - 1))):
            alts.append(_entry(alt, P.log_scalar(rest * 0.5 ** (i + 1))))
        entry["top_logprobs"] = alts[:top]
        out.append(entry)
    return out
