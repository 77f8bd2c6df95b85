"""Any rubric: a score for a dimension the seed rubric does not have, on its own scale.

A rubric prompt names its dimension in a line ``Rubric dimension: {title} ({asks}).`` and
asks for either an integer on a declared range ("with an integer from 0 to 2") or one of
named levels ("with one of the levels: low, medium, high"; level values 0..k-1 in order).
A dimension whose title or question names one of the seed's five dimensions by the
keywords of ``handlers`` is left to the seed handlers, so the seed study's answers are
unchanged; every other dimension is answered here, from one of two sources:

1. a latent cue (``latents.LATENT_CUES``) when the dimension names one: the property a
   world renders into the pixels, read back from them. The family reads it with its
   acuity for single cues, keeps an error fixed per (image, family, latent) of which a
   share is common to all families, and lets its general impression leak in (halo);
2. otherwise the family's holistic impression plus the dimension's own error, fixed per
   (family, image, title), so that repetitions of a request vary only by sampling noise,
   as the seed's dimensions do.

Either way the impression is a z-value; sampling noise of sd ``noise * temperature`` is
added and ``Family.to_scale`` puts it on the declared range with the family's scale use
(its centre, spread and favourites, mapped from its 1-10 use), so bias and noise differ
by family as they do on the seed rubric. A levels answer is the level at that index.
:func:`describe_dimension` says which source a dimension is answered from.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from judgepanel_sim.judges.families import Family, _hash_normals
from judgepanel_sim.judges.handlers import (
    _DIM_PATTERNS,
    ScoreFormat,
    SimRequest,
    format_score,
    malformed_score,
    read_format,
    read_scale,
    reason_for,
)
from judgepanel_sim.judges.latents import LatentCue, find_latent
from judgepanel_sim.judges.marginal import Impression, ScoreMarginal, gaussian_marginal
from judgepanel_sim.judges.protocol import ImageView

HOLISTIC_SHARE = 0.85
"""Correlation of an unnamed dimension's noise-free impression with the holistic one
(over images of the reference mix): with nothing in the pixels to go on, a judge's answer
is mostly its overall impression, as real judges' halo makes it."""

_DIM_LINE = re.compile(
    r"^[ \t]*Rubric dimension:[ \t]*(?P<title>[^(\n]+?)[ \t]*(?:\((?P<asks>[^\n]*)\))?"
    r"[ \t]*\.?[ \t]*$",
    re.I | re.M,
)
_INT_SCALE = re.compile(r"with an integer from\s*(?P<lo>-?\d+)\s*to\s*(?P<hi>-?\d+)", re.I)
_LEVELS = re.compile(r"with one of the levels:[ \t]*(?P<levels>[^\n]+?)[ \t]*$", re.I | re.M)


@dataclass(frozen=True)
class AskedDimension:
    """A dimension request as read from the prompt.

    Attributes:
        title: the dimension's title.
        asks: what the dimension asks about (the text in parentheses; may be empty).
        lo, hi: the answer range (level indices 0..k-1 for a levels answer).
        levels: the level names in order, or None for an integer answer.
    """

    title: str
    asks: str
    lo: int
    hi: int
    levels: tuple[str, ...] | None = None


def seed_dimension(title: str, asks: str = "") -> str | None:
    """The seed dimension a title (first) or question names by the seed keywords, if any."""
    for text in (title, asks):
        for dim, pat in _DIM_PATTERNS.items():
            if pat.search(text):
                return dim
    return None


def _levels(text: str) -> tuple[str, ...] | None:
    m = _LEVELS.search(text)
    if not m:
        return None
    raw = m.group("levels").rstrip(".").split(",")
    names = tuple(n.strip().strip("\"'") for n in raw)
    names = tuple(n for n in names if n)
    return names or None


@lru_cache(maxsize=512)
def parse_dimension(system_text: str, user_text: str) -> AskedDimension | None:
    """The non-seed dimension a prompt asks about, or None (no dimension line, or one the
    seed handlers answer)."""
    m = _DIM_LINE.search(user_text)
    if not m:
        return None
    title, asks = m.group("title").strip(), (m.group("asks") or "").strip()
    if not title or seed_dimension(title, asks) is not None:
        return None
    levels = _levels(user_text)
    if levels is not None:
        return AskedDimension(title, asks, 0, len(levels) - 1, levels)
    sm = _INT_SCALE.search(user_text)
    if sm and int(sm.group("hi")) > int(sm.group("lo")):
        lo, hi = int(sm.group("lo")), int(sm.group("hi"))
    else:
        lo, hi = read_scale(f"{system_text}\n{user_text}")
    return AskedDimension(title, asks, lo, hi)


def _title_key(title: str) -> str:
    return " ".join(title.lower().split())


def _fixed_error(family: Family, digest: str, key: str) -> float:
    """A standard-normal error fixed by (family, image, key), with the family's share of
    its variance common to all families (as ``Family.systematic_error``)."""
    shared = _hash_normals("shared", digest, key, n=1)[0]
    own = _hash_normals("own", family.name, digest, key, n=1)[0]
    c = family.shared_error
    return math.sqrt(c) * shared + math.sqrt(1.0 - c) * own


def latent_skill(family: Family) -> float:
    """How well a family reads one named visible property: half certain, half its mean
    acuity for single cues (one property is easier to read than a rubric dimension)."""
    acuity = list(family.cue_acuity.values())
    mean = sum(acuity) / len(acuity) if acuity else 0.5
    return min(max(0.5 + 0.5 * mean, 0.0), 1.0)


def impression(
    family: Family, image: ImageView, asked: AskedDimension, temperature: float
) -> tuple[float, float, LatentCue | None]:
    """The family's noise-free impression of the dimension, the sd of its sampling noise
    and the latent cue it was read from (None: holistic impression plus own error)."""
    holistic, _ = family.impression(image.features, image.digest, None, temperature)
    sd = family.noise * max(temperature, 0.0)
    cue = find_latent(asked.title, asked.asks)
    if cue is not None:
        s = latent_skill(family)
        err = _fixed_error(family, image.digest, f"latent:{cue.name}")
        own = s * cue.z(image) + math.sqrt(1.0 - s * s) * err
        return (1.0 - family.halo) * own + family.halo * holistic, sd, cue
    rho = HOLISTIC_SHARE
    err = _fixed_error(family, image.digest, f"dimension:{_title_key(asked.title)}")
    return rho * holistic + math.sqrt(1.0 - rho * rho) * err, sd, None


_WORDS = ((-1.2, "very low"), (-0.4, "low"), (0.4, "moderate"), (1.2, "high"))


def _latent_reason(cue: LatentCue, z: float) -> str:
    word = next((w for cut, w in _WORDS if z < cut), "very high")
    return f"Its {cue.name} looks {word}."


def _format_level(level: str, reason: str, fmt: ScoreFormat) -> str:
    if fmt.kind == "json":
        obj: dict[str, Any] = {fmt.score_key: level}
        if fmt.reason_key:
            obj[fmt.reason_key] = reason
        return json.dumps(obj, ensure_ascii=False)
    if fmt.kind == "number":
        return level
    return f"Score: {level}. {reason}"


_PROSE = (
    "This is hard to place on the levels given; it has a bit of everything.",
    "I would rather describe the picture than put it at one level.",
)


class AnyRubricHandler:
    """Scores one image on a rubric dimension the seed rubric does not have."""

    name = "any_rubric"

    def matches(self, req: SimRequest) -> bool:
        return len(req.images) == 1 and parse_dimension(req.system_text, req.user_text) is not None

    def _verdict(self, req: SimRequest) -> tuple[AskedDimension, int, str, ScoreFormat]:
        asked = parse_dimension(req.system_text, req.user_text)
        assert asked is not None  # matches() held
        image = req.images[0]
        z0, sd, cue = impression(req.family, image, asked, req.temperature)
        z = z0
        if req.temperature > 0 and sd > 0:
            z += sd * float(req.rng.standard_normal())
        score = req.family.to_scale(z, asked.lo, asked.hi, req.rng, req.temperature)
        if cue is not None:
            reason = _latent_reason(cue, z0)
        else:
            reason = reason_for(req.family, image.features, None)
        return asked, score, reason, read_format(req.text, req.json_mode)

    def answer(self, req: SimRequest) -> str:
        asked, score, reason, fmt = self._verdict(req)
        if asked.levels is not None:
            return _format_level(asked.levels[score - asked.lo], reason, fmt)
        return format_score(score, reason, fmt)

    def malformed(self, req: SimRequest) -> str:
        asked, score, reason, fmt = self._verdict(req)
        if asked.levels is None:
            return malformed_score(req, score, reason, asked.lo, asked.hi, fmt)
        kind = int(req.rng.integers(4))
        if kind == 0:
            return _PROSE[int(req.rng.integers(len(_PROSE)))]
        level = asked.levels[score - asked.lo]
        if kind == 1:
            fenced = fmt if fmt.kind == "json" else ScoreFormat("json")
            return f"```json\n{_format_level(level, reason, fenced)}\n```"
        if kind == 2:  # an integer where a level name was asked
            return format_score(score + 1, reason, fmt)
        return '{"' + (fmt.score_key if fmt.kind == "json" else "score") + '": "' + level[:1]

    def score_impression(self, req: SimRequest) -> Impression | None:
        """What :meth:`score_marginal` integrates (None for a levels answer, whose score
        token is a word)."""
        asked = parse_dimension(req.system_text, req.user_text)
        if asked is None or asked.levels is not None or not req.images:
            return None
        z0, sd, _ = impression(req.family, req.images[0], asked, req.temperature)
        return req.family, z0, sd, asked.lo, asked.hi, req.temperature

    def score_marginal(self, req: SimRequest) -> ScoreMarginal | None:
        """The distribution an integer answer is drawn from (None for a levels answer,
        whose score token is a word)."""
        asked = self.score_impression(req)
        return None if asked is None else gaussian_marginal(*asked)


def describe_dimension(title: str, asks: str = "") -> str:
    """One sentence saying where the simulated judges' answer on a dimension comes from:
    a seed dimension, a latent cue (which, and what it measures), or the holistic
    impression plus the dimension's own noise. For a world card or a report's notes."""
    seed = seed_dimension(title, asks)
    if seed is not None:
        return f"{title}: answered as the seed rubric's {seed} dimension."
    cue = find_latent(title, asks)
    if cue is not None:
        return (
            f"{title}: answered from the latent cue '{cue.name}' ({cue.meaning}), read from "
            "the pixels with each family's acuity, error and halo."
        )
    return (
        f"{title}: no latent cue of that name; answered from each family's holistic "
        f"impression plus the dimension's own noise (correlation {HOLISTIC_SHARE:g} "
        "before sampling noise)."
    )
