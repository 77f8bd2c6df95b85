"""Reading a judge's JSON score out of free text.

Judges are asked for ``{"score": <integer>, "reason": "..."}`` and nothing else, yet real
models wrap it in code fences, add a sentence before or after it, quote the number, or run
out of tokens in the middle of the reason. The parser accepts what still states a score
unambiguously and raises :class:`~judgepanel.core.calls.AnswerError` with a readable reason for
everything else, so that the client can re-ask and the store can record why a call failed.

Rules, in order:

1. Every JSON object embedded in the text that holds a ``"score"`` key is a candidate;
   code fences, prose and stray braces around them are ignored.
2. When several candidates exist, the **last** one wins: a model that revises itself
   ("... so {"score": 6}. On reflection, {"score": 7}") writes its final answer last.
3. With no valid JSON candidate (typically a reason cut off by ``max_tokens``), a
   ``"score": <number>`` fragment is accepted; again the last one wins.
4. The score must be a finite number or a numeric string (``"7"``, ``" 7.0 "``); booleans,
   lists, words and ``null`` are rejected. Non-integers such as 7.5 are kept as they are
   (the number the judge stated, neither rounded nor discarded) unless ``integer=True``.
5. Values outside ``[lo, hi]`` are rejected, never clipped.

A dimension scored on named levels is read by :func:`parse_levels`: the judge may state a
level's name or its integer value, and anything else is rejected the same way.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from judgepanel.core.calls import AnswerError

SCORE_MIN, SCORE_MAX = 1, 10
"""The seed rubric's scale: a dimension that declares no scale is scored 1-10."""

_FRAGMENT = re.compile(r'"score"\s*:\s*("?)\s*(-?\d+(?:\.\d+)?)\s*\1')
_MAX_SHOWN = 80


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 3] + "..."


def json_objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object embedded in ``text``, in order of appearance.

    A JSON decoder is tried at each ``{``; a valid object is kept and the search resumes
    after it, anything else moves on to the next ``{``. Fences, prose and stray braces never
    form a valid object, so they drop out without hiding an object that follows them.
    """
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    start = text.find("{")
    while start != -1:
        try:
            obj, end = decoder.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        if isinstance(obj, dict):
            found.append(obj)
        start = text.find("{", end)
    return found


def as_number(raw: Any) -> float | int:
    """A finite number from a JSON value: numbers and numeric strings only.

    Raises:
        AnswerError: for booleans, ``null``, containers, words and non-finite values.
    """
    if isinstance(raw, bool) or raw is None:
        raise AnswerError(f"score is not a number: {json.dumps(raw)}")
    if isinstance(raw, int):
        return raw
    if isinstance(raw, float):
        value: float | int = raw
    elif isinstance(raw, str):
        s = raw.strip()
        if not re.fullmatch(r"[+-]?\d+(?:\.\d+)?", s):
            raise AnswerError(f"score is not a number: {_shorten(json.dumps(raw))}")
        value = int(s) if re.fullmatch(r"[+-]?\d+", s) else float(s)
    else:
        raise AnswerError(f"score is not a number: {_shorten(json.dumps(raw))}")
    if isinstance(value, float) and not math.isfinite(value):
        raise AnswerError(f"score is not finite: {raw}")
    return value


def parse_score(
    text: str | None,
    *,
    lo: float = SCORE_MIN,
    hi: float = SCORE_MAX,
    integer: bool = False,
) -> dict[str, Any]:
    """Read the score of a judge's answer.

    Args:
        text: the assistant message content.
        lo: smallest valid score.
        hi: largest valid score.
        integer: reject non-integral scores such as 7.5 instead of keeping them.

    Returns:
        The answer's JSON object with ``score`` replaced by the number read (``int`` when
        integral), for example ``{"score": 7, "reason": "..."}``; a score read from a
        truncated fragment gives ``{"score": 7, "truncated": True}``.

    Raises:
        AnswerError: with the reason, when no valid score can be read.
    """
    if text is None or not text.strip():
        raise AnswerError("empty answer")
    candidates = [o for o in json_objects(text) if "score" in o]
    if candidates:
        obj = dict(candidates[-1])
    else:
        fragments = _FRAGMENT.findall(text)
        if not fragments:
            if json_objects(text):
                raise AnswerError(f"JSON answer has no 'score' field: {_shorten(text)}")
            raise AnswerError(f"no JSON score in answer: {_shorten(text)}")
        obj = {"score": fragments[-1][1], "truncated": True}
    value = as_number(obj["score"])
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if integer and not isinstance(value, int):
        raise AnswerError(f"score {value} is not an integer")
    if not lo <= value <= hi:
        raise AnswerError(f"score {value} outside {lo:g}-{hi:g}")
    obj["score"] = value
    return obj


_LEVEL_FRAGMENT = re.compile(r'"score"\s*:\s*"([^"\n]{1,80})"')


def parse_levels(text: str | None, *, levels: tuple[tuple[str, int], ...]) -> dict[str, Any]:
    """Read a named-level answer: the level's name (any case) or its integer value.

    Returns:
        The answer's JSON object with ``score`` the level's value and ``level`` its name.

    Raises:
        AnswerError: no score, or one naming no level of the scale.
    """
    if text is None or not text.strip():
        raise AnswerError("empty answer")
    candidates = [o for o in json_objects(text) if "score" in o]
    if candidates:
        obj = dict(candidates[-1])
    else:
        fragments = _LEVEL_FRAGMENT.findall(text) or [v for _, v in _FRAGMENT.findall(text)]
        if not fragments:
            raise AnswerError(f"no JSON score in answer: {_shorten(text)}")
        obj = {"score": fragments[-1], "truncated": True}
    raw = obj["score"]
    by_name = {name.casefold(): (name, value) for name, value in levels}
    by_value = {value: (name, value) for name, value in levels}
    found = None
    if isinstance(raw, str) and raw.strip().casefold() in by_name:
        found = by_name[raw.strip().casefold()]
    else:
        try:
            number = as_number(raw)
        except AnswerError:
            number = None
        if number is not None and float(number).is_integer():
            found = by_value.get(int(number))
    if found is None:
        names = ", ".join(name for name, _ in levels)
        raise AnswerError(f"score {_shorten(json.dumps(raw))} is not a level ({names})")
    obj["level"], obj["score"] = found
    return obj


def numeric_value(parsed: Any) -> float | None:
    """The numeric answer stored in the ``value`` column, or ``None``.

    A parsed answer that is itself a number, or an object with a numeric ``score`` (or
    ``value``) field, has a numeric value; choices, rankings and letters do not.
    """
    if isinstance(parsed, bool):
        return None
    if isinstance(parsed, int | float):
        return float(parsed)
    if isinstance(parsed, dict):
        for field in ("score", "value"):
            v = parsed.get(field)
            if isinstance(v, int | float) and not isinstance(v, bool):
                return float(v)
    return None
