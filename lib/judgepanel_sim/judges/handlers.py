"""What a simulated judge answers: the handler plug-in interface and the rubric handlers.

A request is offered to each handler of ``HANDLERS`` in order; the first whose
``matches`` returns True writes the answer. Handlers read only the request (prompt text
and pixels, through :class:`SimRequest`), never a label, id or file path.

Plug-in interface (stable; other modules code against it):

- :class:`SimRequest`: the validated request plus the family and a seeded generator.
- :class:`~judgepanel_sim.judges.protocol.ImageView`: one image (digest, size, lazy pixels,
  cached features), re-exported here.
- :class:`Handler`: ``name``, ``matches(req)``, ``answer(req)``, ``malformed(req)``; a
  handler whose answer carries a sampled score may also define ``score_marginal(req)``,
  the distribution that score is drawn from, which the score token's logprobs report,
  and ``score_impression(req)``, the Gaussian impression that distribution integrates
  (so that a batch's lines have theirs worked out together, ``marginal.precompute``).
- ``REGISTRY``: ``"module:Class"`` paths, resolved lazily into ``HANDLERS`` on first use,
  so a plug-in module may import this one without an import cycle. To add a handler,
  add one line near the top of ``REGISTRY`` (task-specific handlers before the rubric
  ones; the holistic handler stays last, as the fallback).

The rubric handlers recognise what is asked from keywords, not from exact prompt
strings, so the rubric wording can change: which dimension ("technical quality",
"composition", "colour"/"color" and tone, "distinctive"/"original", "emotional impact"),
which scale ("1 to 10", "0-10", "1-5", "out of 100") and which format (JSON with the
template's keys, a bare number, or a short sentence). A dimension of another rubric, one
these keywords do not name, is answered by ``judgepanel_sim.judges.anyrubric``.
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any, Protocol, runtime_checkable

import numpy as np

from judgepanel_sim.judges.families import CUES, DIMENSIONS, Family, IdentityMemo, cues
from judgepanel_sim.judges.marginal import Impression, ScoreMarginal, score_marginal
from judgepanel_sim.judges.protocol import ImageView


@dataclass
class SimRequest:
    """One chat request as a handler sees it.

    Attributes:
        model: the requested model id.
        family: the simulated family serving that model.
        system_text: all system-message text, joined by newlines.
        user_text: all user-message text parts, joined by newlines.
        parts: user content in order: ("text", str) or ("image", ImageView).
        images: decoded images in order.
        temperature: sampling temperature.
        seed: the request's ``seed`` field.
        max_tokens: the completion cap (the server truncates; handlers need not).
        rng: seeded from (server seed, model, request texts and image digests, seed).
        json_mode: ``response_format`` asked for JSON.
    """

    model: str
    family: Family
    system_text: str
    user_text: str
    parts: list[tuple[str, object]]
    images: list[ImageView]
    temperature: float
    seed: int | None
    max_tokens: int | None
    rng: np.random.Generator
    json_mode: bool = False

    @cached_property
    def text(self) -> str:
        """System and user text together (what keyword readers search); built once, so
        the readers' caches hash it once."""
        return f"{self.system_text}\n{self.user_text}" if self.system_text else self.user_text

    def layout(self) -> tuple[str, tuple[str | None, ...]]:
        """What a handler's ``matches`` may read: the system text and the user parts in
        order, each text as itself and each image as None."""
        return self.system_text, tuple(v if k == "text" else None for k, v in self.parts)


@runtime_checkable
class Handler(Protocol):
    """A kind of task a simulated judge can answer.

    ``matches`` must read only the request's ``layout()`` (its texts and where its images
    are, never pixels or sampling fields): the matching handler is cached per layout.
    """

    name: str

    def matches(self, req: SimRequest) -> bool: ...

    def answer(self, req: SimRequest) -> str: ...

    def malformed(self, req: SimRequest) -> str: ...


REGISTRY: list[str] = [
    # Task-specific handlers first (one line each), e.g. "judgepanel_sim.judges.vab:VabHandler".
    "judgepanel_sim.judges.pairwise:PairwiseHandler",  # before VAB: a pair asked "which of the two"
    "judgepanel_sim.judges.vab:VabHandler",
    "judgepanel_sim.judges.visionq:VisionQHandler",
    "judgepanel_sim.judges.anyrubric:AnyRubricHandler",  # dimensions the seed lacks
    "judgepanel_sim.judges.handlers:DimensionHandler",
    "judgepanel_sim.judges.handlers:HolisticHandler",  # the fallback: keep it last
]
"""Handler classes as "module:Class", in matching order."""

HANDLERS: list[Handler]  # resolved from REGISTRY on first access (module __getattr__)
_HANDLERS: list[Handler] | None = None


def _load_handlers() -> list[Handler]:
    out: list[Handler] = []
    for path in REGISTRY:
        module_name, _, cls_name = path.partition(":")
        cls = getattr(importlib.import_module(module_name), cls_name)
        handler = cls()
        if not isinstance(handler, Handler):
            raise TypeError(f"{path} does not implement the Handler protocol")
        out.append(handler)
    return out


def handlers() -> list[Handler]:
    """The registered handlers, instantiated once, in matching order."""
    global _HANDLERS
    if _HANDLERS is None:
        _HANDLERS = _load_handlers()
    return _HANDLERS


def __getattr__(name: str) -> Any:
    # ``HANDLERS`` is resolved on first access, after every plug-in module can import us.
    if name == "HANDLERS":
        return handlers()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_BY_LAYOUT: dict[tuple[str, tuple[str | None, ...]], Handler] = {}
_BY_LAYOUT_SIZE = 4096


def find_handler(req: SimRequest) -> Handler:
    """The first registered handler that matches ``req`` (cached per ``req.layout()``: a
    study sends each prompt many times, with other images)."""
    layout = req.layout()
    found = _BY_LAYOUT.get(layout)
    if found is not None:
        return found
    for handler in handlers():
        if handler.matches(req):
            if len(_BY_LAYOUT) >= _BY_LAYOUT_SIZE:
                _BY_LAYOUT.clear()
            _BY_LAYOUT[layout] = handler
            return handler
    raise LookupError("no handler matches the request")  # unreachable: holistic is a fallback


# -- reading the prompt ----------------------------------------------------------------

_DIM_PATTERNS: dict[str, re.Pattern[str]] = {
    "quality": re.compile(
        r"technical(?:\s+image)?\s+quality|\bimage\s+quality\b|\btechnical\b|\bsharpness\b"
        r"|\bnoise\b|\bexposure\b|\bfocus\b|\bartefacts?\b|\bartifacts?\b",
        re.I,
    ),
    "composition": re.compile(
        r"\bcompos(?:ition|itional|ed|ing)\b|\bframing\b|\blayout\b|rule of thirds", re.I
    ),
    "colour": re.compile(
        r"\bcolou?r(?:s|ing|ful|fulness)?\b|\btonal\b|\btones?\b|\bpalette\b|white balance"
        r"|\bgrading\b",
        re.I,
    ),
    "distinctiveness": re.compile(
        r"\bdistinct(?:ive|iveness)?\b|\borigin(?:al|ality)\b|\bcreativ\w*|\bnovel(?:ty)?\b"
        r"|\bunique(?:ness)?\b|\binnovative\b|\bunconventional\b",
        re.I,
    ),
    "emotion": re.compile(
        r"\bemotion(?:al|ally|s)?\b|\bmood\b|\bfeelings?\b|\bevocative\b|\bimpact\b", re.I
    ),
}
_HOLISTIC = re.compile(
    r"\boverall\b|\baesthetic(?:s|ally)?\b|\bas a whole\b|\bholistic\w*|\bbeauty\b"
    r"|\bbeautiful\b|\bhow good\b|\bgeneral quality\b",
    re.I,
)
_SENTENCE = re.compile(r"(?<=[.!?:])\s+|\n+")


def _sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE.split(text) if s.strip()]


def _dimension_scores(req_text_system: str, req_text_user: str) -> dict[str, float]:
    """Keyword evidence per dimension: mentions in a message's first sentence (the role or
    the task) or in a sentence saying "only" count three times, others once."""
    scores = dict.fromkeys(DIMENSIONS, 0.0)
    for text in (req_text_system, req_text_user):
        for i, sentence in enumerate(_sentences(text)):
            weight = 3.0 if i == 0 or re.search(r"\bonly\b", sentence, re.I) else 1.0
            for dim, pat in _DIM_PATTERNS.items():
                hits = len(pat.findall(sentence))
                if hits:
                    scores[dim] += weight * min(hits, 2)
    return scores


def is_holistic(req: SimRequest) -> bool:
    """Whether the task statement asks for an overall / aesthetic verdict."""
    return _is_holistic(req.system_text, req.user_text)


@lru_cache(maxsize=512)
def _is_holistic(system_text: str, user_text: str) -> bool:
    for text in (user_text, system_text):
        sents = _sentences(text)
        if sents and _HOLISTIC.search(sents[0]):
            return True
    return False


def detect_dimension(req: SimRequest) -> str | None:
    """The rubric dimension the prompt asks about, or None for an overall request.

    A dimension needs at least one emphasised mention (role, task sentence or "only") and
    must clearly lead the others; a prompt whose task sentence asks for an overall or
    aesthetic verdict is holistic even if it lists dimensions to consider.
    """
    return _detect_dimension(req.system_text, req.user_text)


@lru_cache(maxsize=512)
def _detect_dimension(system_text: str, user_text: str) -> str | None:
    if _is_holistic(system_text, user_text):
        return None
    scores = _dimension_scores(system_text, user_text)
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    (best, top), (_, second) = ranked[0], ranked[1]
    if top >= 3.0 and top >= 1.5 * second:
        return best
    return None


_RANGE = re.compile(
    r"(?P<lo>-?\d{1,3})(?:\.0)?\s*(?:\([^)]{0,40}\)\s*)?(?:-|–|—|to|through|and)\s*"
    r"(?P<hi>\d{1,3})(?:\.0)?(?!\d)",
    re.I,
)
_OUT_OF = re.compile(r"\bout\s+of\s+(?P<hi>\d{1,3})\b|(?<![\d-])/\s*(?P<hi2>\d{1,3})\b", re.I)
_SCALE_WORDS = re.compile(
    r"(?:scale|from|between|range|integer|number|rating|score|rate|grade)\W*(?:\w+\W+){0,4}$",
    re.I,
)


@lru_cache(maxsize=512)
def read_scale(text: str, default: tuple[int, int] = (1, 10)) -> tuple[int, int]:
    """The answer scale a prompt asks for, e.g. (1, 10), (0, 10), (1, 5), (0, 100).

    Ranges introduced by words such as "scale", "from", "integer" or "score" win; among
    the rest the widest wins (so rubric tier labels like "9-10" do not); "out of N" and
    "/N" give (0, N) for N > 10 and (1, N) otherwise.
    """
    best: tuple[float, int, int] | None = None
    for m in _RANGE.finditer(text):
        lo, hi = int(m.group("lo")), int(m.group("hi"))
        if hi <= lo or lo < 0 or hi > 1000:
            continue
        before = text[max(0, m.start() - 40) : m.start()]
        rank = (10.0 if _SCALE_WORDS.search(before) else 0.0) + min(hi - lo, 100) / 100.0
        if hi - lo < 3:
            rank -= 20.0
        if best is None or rank > best[0]:
            best = (rank, lo, hi)
    if best is not None and best[0] > 0:
        return best[1], best[2]
    m = _OUT_OF.search(text)
    if m:
        hi = int(m.group("hi") or m.group("hi2"))
        if hi >= 2:
            return (0 if hi > 10 else 1), hi
    if best is not None:
        return best[1], best[2]
    return default


@dataclass(frozen=True)
class ScoreFormat:
    """How an answer should be written.

    Attributes:
        kind: "json", "number" (just the number) or "sentence".
        score_key: JSON key for the score.
        reason_key: JSON key for the reason, or None when the template has none.
    """

    kind: str
    score_key: str = "score"
    reason_key: str | None = "reason"


_JSON_WORD = re.compile(r"\bjson\b", re.I)
_TEMPLATE_KEY = re.compile(r"[{,]\s*\"(\w+)\"\s*:")
_NUMBER_ONLY = re.compile(
    r"\b(?:just|only)\s+(?:the|a|one|an)?\s*(?:single\s+)?(?:number|integer|digit|score|rating)"
    r"|\b(?:number|integer|digit)\s+only\b|\bnothing\s+(?:else\s+)?but\s+(?:the|a)\s+number",
    re.I,
)
_REASON_KEYS = ("reason", "reasoning", "rationale", "explanation", "justification", "comment")
_SCORE_KEYS = ("score", "rating", "overall", "value", "grade", "aesthetic_score")


@lru_cache(maxsize=512)
def read_format(text: str, json_mode: bool = False) -> ScoreFormat:
    """The answer format a prompt asks for (JSON template keys, bare number or sentence)."""
    keys = _TEMPLATE_KEY.findall(text)
    if json_mode or _JSON_WORD.search(text) or keys:
        score_key = next((k for k in keys if k.lower() in _SCORE_KEYS), None)
        if score_key is None:
            score_key = keys[0] if keys else "score"
        reason_key = next((k for k in keys if k.lower() in _REASON_KEYS), None)
        if reason_key is None and not keys:
            reason_key = "reason"
        return ScoreFormat("json", score_key, reason_key)
    if _NUMBER_ONLY.search(text):
        return ScoreFormat("number", reason_key=None)
    return ScoreFormat("sentence")


_ANSWER_JSON = json.JSONEncoder(ensure_ascii=False)  # json.dumps(obj, ensure_ascii=False)


def format_score(score: int, reason: str, fmt: ScoreFormat) -> str:
    """Write ``score`` (and ``reason``) in the requested format."""
    if fmt.kind == "json":
        obj: dict[str, Any] = {fmt.score_key: score}
        if fmt.reason_key:
            obj[fmt.reason_key] = reason
        return _ANSWER_JSON.encode(obj)
    if fmt.kind == "number":
        return str(score)
    return f"Score: {score}. {reason}"


# -- reasons -----------------------------------------------------------------------------

_PHRASES: dict[str, tuple[str, str]] = {
    "sharp": ("crisp focus", "soft focus"),
    "clean": ("clean smooth areas", "visible noise"),
    "unblocked": ("clean compression", "blocky compression artefacts"),
    "exposed": ("sound exposure", "poor exposure"),
    "unclipped": ("detail held in highlights and shadows", "clipped highlights or shadows"),
    "placed": ("a well-placed subject", "an awkwardly placed subject"),
    "balanced": ("balanced visual weight", "lopsided visual weight"),
    "uncluttered": ("a clean, uncluttered frame", "a cluttered frame"),
    "level": ("a level horizon", "a tilted frame"),
    "framed": ("clean framing", "a subject crowded by the frame edge"),
    "separated": (
        "a subject that stands out from its background",
        "a subject lost in its background",
    ),
    "colourful": ("pleasing colour", "dull or garish colour"),
    "vivid": ("rich, vivid colour", "washed-out colour"),
    "neutral": ("accurate white balance", "a strong colour cast"),
    "toned": ("a full tonal range", "flat or harsh tones"),
    "harmonious": ("a harmonious palette", "clashing hues"),
    "natural_sat": ("natural saturation", "unnatural saturation"),
    "bold": ("a bold, striking look", "a timid look"),
    "intricate": ("rich fine detail", "little detail to explore"),
    "unusual": ("an unconventional arrangement", "a conventional arrangement"),
    "warm_light": ("warm, inviting light", "cold light"),
    "dramatic": ("dramatic light", "flat light"),
    "bright": ("an airy brightness", "a gloomy darkness"),
}
assert set(_PHRASES) == set(CUES)


def reason_for(family: Family, features: Mapping[str, float], dimension: str | None) -> str:
    """One sentence naming the two cues that weigh most in this family's judgement.

    For a dimension, its cues; for an overall verdict (``dimension`` None), every cue the
    family uses, weighted by its taste. Fixed by its arguments, so memoised.
    """
    memo = _REASONS.get((family, features), dimension)
    if memo is None:
        memo = _reason(family, features, dimension)
        _REASONS.put((family, features), dimension, memo)
    return memo


_REASONS = IdentityMemo(32768)  # (family, features, dimension)


def _reason(family: Family, features: Mapping[str, float], dimension: str | None) -> str:
    cv = cues(features)
    dims = [dimension] if dimension else list(DIMENSIONS)
    weight: dict[str, float] = {}
    for d in dims:
        scale = 1.0 if dimension else family.taste[d]
        for k, w in family.weights[d].items():
            weight[k] = weight.get(k, 0.0) + scale * w
    contrib = sorted(((abs(w * (cv[k] - 0.3)), k) for k, w in weight.items()), key=lambda t: -t[0])
    picked = [k for _, k in contrib[:2]]
    words = [_PHRASES[k][0] if cv[k] >= 0.3 else _PHRASES[k][1] for k in picked]
    good = [cv[k] >= 0.3 for k in picked]
    if len(words) == 1:
        text = words[0]
    elif good[0] == good[1]:
        text = f"{words[0]} and {words[1]}"
    else:
        text = f"{words[0]} but {words[1]}"
    return text[0].upper() + text[1:] + "."


# -- malformed answers -------------------------------------------------------------------

_PROSE = (
    "The image has some appealing qualities, though a single figure would not do it justice.",
    "I find this picture interesting to look at; its strengths and weaknesses roughly balance.",
    "Hard to say. Parts of the frame work well and others less so.",
)


def malformed_score(
    req: SimRequest, score: int, reason: str, lo: int, hi: int, fmt: ScoreFormat
) -> str:
    """An unreadable or out-of-range answer, as real judges sometimes give.

    One of: prose with no number; the answer wrapped in a markdown fence (still readable
    by a tolerant parser); a score outside [lo, hi]; JSON cut off before its score.
    """
    kind = int(req.rng.integers(4))
    if kind == 0:
        return _PROSE[int(req.rng.integers(len(_PROSE)))]
    if kind == 1:
        fenced = fmt if fmt.kind == "json" else ScoreFormat("json")
        return f"```json\n{format_score(score, reason, fenced)}\n```"
    if kind == 2:
        bad = hi + int(req.rng.integers(1, 4)) if req.rng.random() < 0.7 else lo - 1
        if hi <= 10 and req.rng.random() < 0.3:
            bad = hi * 10  # a percentage where a 1-10 score was asked
        return format_score(bad, reason, fmt)
    key = fmt.score_key if fmt.kind == "json" else "score"
    cut = reason[: max(4, len(reason) // 2)]
    if req.rng.random() < 0.5:
        return '{"' + (fmt.reason_key or "reason") + '": "' + cut
    return '{"' + key + '": '


# -- the rubric handlers ----------------------------------------------------------------


class _ScoreHandler:
    """Shared machinery: perceive, take a verdict, put it on the asked scale and format."""

    name = "score"

    def _dimension(self, req: SimRequest) -> str | None:
        raise NotImplementedError

    def _verdict(self, req: SimRequest) -> tuple[int, str, int, int, ScoreFormat]:
        image = req.images[0]
        feats = image.features
        dim = self._dimension(req)
        perceived = req.family.perceive(feats, image.digest, req.rng, req.temperature)
        z = perceived[dim] if dim else req.family.holistic_z(perceived)
        lo, hi = read_scale(req.text)
        score = req.family.to_scale(z, lo, hi, req.rng, req.temperature)
        return (
            score,
            reason_for(req.family, feats, dim),
            lo,
            hi,
            read_format(req.text, req.json_mode),
        )

    def answer(self, req: SimRequest) -> str:
        if not req.images:
            return "I can only rate an image when one is attached; please send the picture."
        score, reason, _, _, fmt = self._verdict(req)
        return format_score(score, reason, fmt)

    def malformed(self, req: SimRequest) -> str:
        if not req.images:
            return "..."
        score, reason, lo, hi, fmt = self._verdict(req)
        return malformed_score(req, score, reason, lo, hi, fmt)

    def score_impression(self, req: SimRequest) -> Impression | None:
        """What :meth:`score_marginal` integrates, to work several out at once."""
        if not req.images:
            return None
        image = req.images[0]
        lo, hi = read_scale(req.text)
        dim, t = self._dimension(req), req.temperature
        return (req.family, *req.family.impression(image.features, image.digest, dim, t), lo, hi, t)

    def score_marginal(self, req: SimRequest) -> ScoreMarginal | None:
        """The distribution ``answer``'s score is drawn from (no draw from ``req.rng``)."""
        if not req.images:
            return None
        image = req.images[0]
        lo, hi = read_scale(req.text)
        return score_marginal(
            req.family,
            image.features,
            image.digest,
            self._dimension(req),
            lo,
            hi,
            req.temperature,
        )


class DimensionHandler(_ScoreHandler):
    """Scores one image on the rubric dimension the prompt names."""

    name = "dimension"

    def matches(self, req: SimRequest) -> bool:
        return len(req.images) == 1 and detect_dimension(req) is not None

    def _dimension(self, req: SimRequest) -> str | None:
        return detect_dimension(req)


class HolisticHandler(_ScoreHandler):
    """The fallback: an overall rating of the first image, on whatever scale is asked."""

    name = "holistic"

    def matches(self, req: SimRequest) -> bool:
        return True

    def _dimension(self, req: SimRequest) -> str | None:
        return None
