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

import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any

import numpy as np

from judgepanel_sim import portable as P
from judgepanel_sim.judges.marginal import ScoreMarginal
from judgepanel_sim.judges.protocol import RawJSON

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


Position = tuple[str, float, list[tuple[str, float]]]
"""One token of an answer: its text, its log-probability and its ``top_logprobs`` as
(token, log-probability) pairs."""

_HALVES = tuple(0.5 ** (j + 1) for j in range(len(_LETTERS)))
"""The share of the rest of a position's mass each alternative takes, in turn (more than
any token has: at most seven letters, or seven variants of a word)."""


def _is_score(token: str, marginal: ScoreMarginal) -> bool:
    core = token.strip()
    return core.isascii() and core.isdigit() and marginal.lo <= int(core) <= marginal.hi


@dataclass(frozen=True, eq=False)
class _Layout:
    """What an answer's logprobs are apart from their numbers, the same for every answer
    of one text (remembered: answers repeat their texts).

    Attributes:
        toks: the tokens.
        score_at: the score token's position (-1: none).
        alts: each token's alternatives (none for the score token).
        described: the positions of the other tokens.
        taken: which of each described token's masses (its own, then one an alternative,
            as many columns as the most alternatives any token has) are listed.
    """

    toks: tuple[str, ...]
    score_at: int
    alts: tuple[tuple[str, ...], ...]
    described: np.ndarray
    taken: np.ndarray


@lru_cache(maxsize=4096)
def _layout(toks: tuple[str, ...], score_at: int, k: int) -> _Layout:
    """The layout of the tokens ``toks`` with ``k`` alternatives asked a token."""
    alts = tuple(() if i == score_at else _alternatives(t, k) for i, t in enumerate(toks))
    described = [i for i in range(len(toks)) if i != score_at]
    counts = np.array([len(alts[i]) for i in described], dtype=np.int64)
    width = int(counts.max(initial=0))
    taken = np.arange(1 + width)[None, :] <= counts[:, None]
    return _Layout(toks, score_at, alts, np.array(described, dtype=np.int64), taken)


def _score_at(toks: tuple[str, ...], marginal: ScoreMarginal | None, truncated: bool) -> int:
    """The position of the score token (-1: none): the first number on the scale, unless
    it ends a cut answer."""
    if marginal is None:
        return -1
    last = len(toks) - 1
    return next(
        (i for i, t in enumerate(toks) if _is_score(t, marginal) and not (truncated and i == last)),
        -1,
    )


def _described_logs(layout: _Layout, draws: np.ndarray, temperature: float) -> list[float]:
    """The log-probabilities of the described tokens: each one's own, then its
    alternatives', in token order.

    Each position's probability ``p`` (from its uniform) and its alternatives' masses
    (``(1 - p) / 2``, ``(1 - p) / 4``, ...) are taken for all tokens at once, by the
    operations and in the order each token alone would take them, and their logs in one
    array call (`judgepanel_sim.portable.log` gives the bits `log_scalar` gives).
    """
    spread = min(1.0, 0.15 + 0.35 * max(temperature, 0.0))
    p = np.minimum(np.maximum(1.0 - spread * draws[layout.described], 0.5), 0.9999)
    masses = np.empty(layout.taken.shape)
    masses[:, 0] = p
    masses[:, 1:] = (1.0 - p)[:, None] * np.array(_HALVES[: masses.shape[1] - 1])
    taken = masses[layout.taken]
    return P.log(taken).tolist() if taken.size else []


def _score_listing(token: str, marginal: ScoreMarginal, top: int) -> list[tuple[str, float]]:
    """The score token with its log-probability, then the ``top`` likeliest scores."""
    lead = token[: len(token) - len(token.lstrip())]
    listed = [(token, marginal.logprob(int(token.strip())))]
    return listed + [(f"{lead}{k}", lp) for k, lp in marginal.top(top)]


def _positions(
    layout: _Layout, logs: list[float], score: list[tuple[str, float]], top: int
) -> list[Position]:
    """Every token with its log-probability and listed alternatives."""
    out: list[Position] = []
    at = 0
    for i, tok in enumerate(layout.toks):
        if i == layout.score_at:
            out.append((tok, score[0][1], score[1:]))
            continue
        alts = layout.alts[i]
        listed = [(tok, logs[at])] + [(alt, logs[at + 1 + j]) for j, alt in enumerate(alts)]
        out.append((tok, logs[at], listed[:top]))
        at += 1 + len(alts)
    return out


def answer_logprobs(
    text: str,
    top: int,
    rng: np.random.Generator,
    temperature: float,
    marginal: ScoreMarginal | None = None,
    truncated: bool = False,
    *,
    as_json: bool = False,
) -> list[dict[str, Any]] | RawJSON:
    """``choices[i].logprobs.content`` for ``text``: one entry per token.

    Args:
        text: the sampled answer.
        top: alternatives asked for (``top_logprobs``).
        rng: draws each position's confidence (one uniform per token, in order).
        temperature: higher temperature spreads the mass (lower top probability).
        marginal: the distribution the answer's score was drawn from, for its score token
            (``None``: no token is a score).
        truncated: the answer was cut; a number at its very end may be a cut score.
        as_json: the entries as the compact JSON ``compact_json`` writes of them, made
            from each token's pieces without building an entry (the same draws).
    """
    toks = tuple(tokens(text))
    draws = rng.random(len(toks))
    score_at = _score_at(toks, marginal, truncated)
    layout = _layout(toks, score_at, max(0, top - 1))
    logs = _described_logs(layout, draws, temperature)
    score = _score_listing(toks[score_at], marginal, top) if score_at >= 0 else []  # type: ignore[arg-type]
    if as_json:
        return _written(layout, logs, score, top)
    return _entries(_positions(layout, logs, score, top))


def _entries(answer: list[Position]) -> list[dict[str, Any]]:
    out = []
    for tok, lp, listed in answer:
        entry = _entry(tok, lp)
        entry["top_logprobs"] = [_entry(t, v) for t, v in listed]
        out.append(entry)
    return out


def _escaped(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


@lru_cache(maxsize=8192)
def _pieces(token: str) -> tuple[str, str]:
    """An entry of ``token`` as compact JSON before and after its log-probability, as
    `str.format` text (its braces doubled)."""
    head = '{"token":' + encode_basestring(token) + ',"logprob":'
    tail = ',"bytes":[' + ",".join(map(str, _utf8(token))) + "]"
    return _escaped(head), _escaped(tail)


def _slot(token: str, number: int) -> str:
    head, tail = _pieces(token)
    return f"{head}{{{number}}}{tail}"


@lru_cache(maxsize=4096)
def _template(layout: _Layout, top: int, score: tuple[str, ...]) -> str:
    """The JSON text of ``layout``'s logprobs with a `str.format` field for each number
    (written as the encoder writes a float):
    the described tokens' log-probabilities in order, then the score token's own and its
    listed scores' (``score``, their tokens)."""
    parts = []
    at = 0
    n_logs = sum(1 + len(layout.alts[i]) for i in layout.described.tolist())
    for i, tok in enumerate(layout.toks):
        if i == layout.score_at:
            listed = [_slot(t, n_logs + 1 + j) + "}}" for j, t in enumerate(score)]
            number = n_logs
        else:
            alts = layout.alts[i]
            listed = [_slot(tok, at)] + [_slot(alt, at + 1 + j) for j, alt in enumerate(alts)]
            listed, number = [entry + "}}" for entry in listed[:top]], at
            at += 1 + len(alts)
        parts.append(_slot(tok, number) + ',"top_logprobs":[' + ",".join(listed) + "]}}")
    return "[" + ",".join(parts) + "]"


def _written(
    layout: _Layout, logs: list[float], score: list[tuple[str, float]], top: int
) -> RawJSON:
    """The entries as compact JSON: the numbers put in the text of the answer's layout."""
    numbers = logs + [lp for _, lp in score]
    if not math.isfinite(sum(numbers)):  # the encoder writes these as JavaScript's constants
        entries = _entries(_positions(layout, logs, score, top))
        return RawJSON(json.dumps(entries, separators=(",", ":"), ensure_ascii=False))
    written = map(float.__repr__, numbers)  # as the encoder writes a float
    return RawJSON(_template(layout, top, tuple(t for t, _ in score[1:])).format(*written))
