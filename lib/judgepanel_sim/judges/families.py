"""Five simulated judge families, each with its own eye, taste and way of using a scale.

A family looks at an image only through ``perception.features``. Those raw features are
first read as *cues*: goodness-oriented numbers on a rough z-scale (0 is an ordinary
image, +1 clearly good, -2 or below a plain defect), with fixed physical anchors that
hold for any picture. A family then builds its estimate of each rubric dimension from
the cues with its own weights and non-linearity, adds an error that is fixed for the
pair (image, family) (so repetitions do not average it away; part of it is shared by all
families, as errors of real models are correlated), lets a general impression leak into
every dimension (halo), and adds sampling noise that grows with temperature.

Distinctiveness and emotional impact barely show in pixels, so every family is weak on
them: their cues are faint proxies and their skill is low.

Characters (see ``FAMILIES``):

- aurora, the generalist: the most skilled overall, generous, heavy use of 7 and 8.
- basalt, the technician: reads sharpness, noise and compression best; weak on
  composition; its overall taste is dominated by technical quality; compressed scale.
- cobalt, the colourist: strong on colour and tone but loves saturation without limit;
  harsh and uses the whole scale; strong pull toward the first slot.
- dune, the compositionist: strong on placement, balance, clutter and tilt; blind to
  noise; taste led by composition and mood; sticks to the middle of the scale.
- ember, the impressionist: the least skilled, strong halo (one impression colours every
  dimension), taste led by emotion, expansive scale, most sampling noise, strongest
  position bias.

Nothing here knows how an image was made; no family receives a label, id or path.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from itertools import repeat
from statistics import NormalDist
from typing import Any

import numpy as np

from judgepanel.core.prompts import DIMENSIONS
from judgepanel_sim import portable as P
from judgepanel_sim.judges.calibration import ideal_weights

SHARED_ERROR = 0.35
"""Share of the per-image error variance common to all families (correlated errors)."""

_NORMAL = NormalDist()


def _clip(x: float, lo: float = -3.5, hi: float = 2.0) -> float:
    return lo if x < lo else hi if x > hi else x


def _log2(x: float) -> float:
    return P.log2_scalar(max(x, 1e-6))


CUES: dict[str, str] = {
    # Technical quality.
    "sharp": "edges are crisp (edge width, Laplacian energy)",
    "clean": "no visible noise in flat areas",
    "unblocked": "no JPEG block artefacts",
    "exposed": "mean brightness near a well-exposed middle",
    "unclipped": "highlights and shadows hold detail",
    # Composition.
    "placed": "subject on a thirds line rather than dead centre or at an edge",
    "balanced": "visual weight balanced left-right and top-bottom",
    "uncluttered": "few competing salient regions and little edge clutter",
    "level": "dominant lines level or plumb",
    "framed": "subject of a readable size and not cut by the frame edge",
    "separated": "subject crisper than its background",
    # Colour and tone.
    "colourful": "colourfulness in the pleasing middle (neither dull nor garish)",
    "vivid": "more colour is better, without limit (a colour lover's reading)",
    "neutral": "no colour cast",
    "toned": "contrast and tonal range full but not harsh",
    "harmonious": "hues concentrated in a harmonious template",
    "natural_sat": "saturation natural (neither grey nor oversaturated)",
    # Faint proxies for distinctiveness and emotional impact.
    "bold": "strong contrast and a striking palette",
    "intricate": "rich fine texture and detail",
    "unusual": "an unconventional arrangement (extreme placement, unusual hue mix)",
    "warm_light": "warm light",
    "dramatic": "low-key, contrasty, vignetted light",
    "bright": "a bright, airy picture",
}
"""Cue names and what each means (goodness-oriented; positive = better)."""


# Centre and spread of each raw cue over a fixed reference mix: 160 procedurally
# rendered scenes with random capture faults and three photographs (whole and cropped) in
# ten versions each (clean, blurred, noisy, compressed, bright, dark, dull, garish, flat,
# rotated); 5-95% winsorised mean and standard deviation. They put cues on a common scale.
_REFERENCE: dict[str, tuple[float, float]] = {
    "sharp": (-0.06, 1.2),
    "clean": (0.19, 1.1),
    "unblocked": (-0.29, 1.2),
    "exposed": (0.36, 0.33),
    "unclipped": (0.06, 0.75),
    "placed": (0.15, 0.29),
    "balanced": (0.07, 0.36),
    "uncluttered": (-1.23, 1.32),
    "level": (-0.12, 0.4),
    "framed": (0.32, 0.32),
    "separated": (-0.19, 0.24),
    "colourful": (0.22, 0.65),
    "vivid": (0.25, 0.75),
    "neutral": (0.18, 0.47),
    "toned": (0.45, 0.31),
    "harmonious": (0.24, 0.26),
    "natural_sat": (0.36, 0.11),
    "bold": (0.13, 0.47),
    "intricate": (-0.31, 0.53),
    "unusual": (-0.23, 0.47),
    "warm_light": (0.19, 0.64),
    "dramatic": (0.02, 0.51),
    "bright": (0.17, 0.53),
}


class IdentityMemo:
    """Results keyed by the identity of the objects they were computed from.

    The server caches one features dict per image and serves the same family objects, so
    a result that depends only on (family, features, ...) is found again by identity,
    exactly and without hashing the features. The objects are held with the result, so
    their ids cannot be reused while the entry lives; the memo is emptied when full.
    """

    def __init__(self, maxsize: int = 8192) -> None:
        self.maxsize = maxsize
        self._data: dict[Hashable, tuple[tuple[object, ...], Any]] = {}

    def get(self, objs: tuple[object, ...], extra: Hashable = None) -> Any | None:
        hit = self._data.get((*map(id, objs), extra))
        if hit is not None and all(a is b for a, b in zip(hit[0], objs, strict=True)):
            return hit[1]
        return None

    def put(self, objs: tuple[object, ...], extra: Hashable, value: Any) -> None:
        if len(self._data) >= self.maxsize:
            self._data.clear()
        self._data[(*map(id, objs), extra)] = (objs, value)


_CUE_MEMO = IdentityMemo()
_PERCEIVED = IdentityMemo(32768)  # (family, features, digest): five families per image


def cues(f: Mapping[str, float]) -> dict[str, float]:
    """Read pixel features as goodness-oriented cues on a common z-scale.

    Each cue is first read with physical anchors (edge width in px, noise in 8-bit luma
    levels, ...), so the reading applies to any image, real or synthetic, then put on a
    z-scale against a fixed reference mix (``_REFERENCE``) and clipped to [-4, 2.5].
    The result is memoised for the same features object (the server caches one per image).
    """
    memo = _CUE_MEMO.get((f,))
    if memo is not None:
        return dict(memo)
    raw = raw_cues(f)
    out = {}
    for k, v in raw.items():
        centre, spread = _REFERENCE[k]
        out[k] = _clip((v - centre) / spread, -4.0, 2.5)
    _CUE_MEMO.put((f,), None, out)
    return dict(out)


def raw_cues(f: Mapping[str, float]) -> dict[str, float]:
    """Cues in their physically anchored units, before standardisation."""
    ew = f["edge_width"]
    sharp = 1.0 - 2.2 * _log2(ew / 2.8) if ew > 2.8 else 1.0 + 0.4 * (2.8 - ew)
    # Noise inflates the Laplacian's variance by 20 sigma^2 (the squared weights of its
    # kernel); a perceiver does not mistake grain for detail, so that share is discounted.
    detail_var = max(10.0 ** f["sharpness"] - 20.0 * f["noise"] ** 2, 1e-3)
    sharp += 0.2 * (P.log10_scalar(detail_var) - 2.8)
    noise = f["noise"]
    clean = 0.8 - 1.0 * max(0.0, _log2(noise / 0.9))
    unblocked = 0.5 - 2.0 * max(0.0, f["blockiness"] - 0.1)
    br = f["brightness"]
    exposed = 0.6 - 6.0 * max(0.0, abs(br - 0.5) - 0.1)
    unclipped = 0.5 - 7.0 * f["highlight_clip"] - 5.0 * f["shadow_clip"]

    size = f["subject_size"]
    placed = 0.7 - 6.0 * f["thirds_x"] - 2.0 * max(0.0, abs(f["subject_y"] - 0.5) - 0.25)
    balanced = (
        0.5
        - 2.5 * max(0.0, abs(f["balance_lr"]) - 0.15)
        - 1.5 * max(0.0, abs(f["balance_tb"]) - 0.25)
    )
    uncluttered = (
        0.7 - 0.45 * max(0.0, f["blob_count"] - 1.0) - 2.5 * max(0.0, f["edge_density"] - 0.15)
    )
    # Lines far from level or plumb are diagonals of the subject, not a tilted camera.
    tilt = abs(f["tilt"])
    tilt = tilt if tilt <= 15.0 else max(0.0, 15.0 - 1.5 * (tilt - 15.0))
    level = 0.4 - 0.16 * tilt * min(1.0, 0.3 + 2.0 * f["line_strength"])
    framed = (
        0.5
        - 9.0 * max(0.0, f["border_saliency"] - 0.09)
        - 25.0 * max(0.0, 0.04 - size)
        - 2.0 * max(0.0, size - 0.45)
    )
    separated = 0.9 * (f["focus_contrast"] - 0.4)

    m = f["colourfulness"]
    colourful = 0.8 - 1.2 * _log2(m / 55.0) ** 2
    vivid = 1.1 * _log2(m / 45.0)
    neutral = 0.6 - 5.0 * max(0.0, f["colour_cast"] - 0.1)
    contrast = f["contrast"]
    toned = (
        0.6
        - 20.0 * max(0.0, 0.13 - contrast)
        - 8.0 * max(0.0, contrast - 0.33)
        - 2.0 * max(0.0, 0.5 - f["tonal_range"])
    )
    harmonious = 3.0 * (f["hue_harmony"] - 0.8)
    sat = f["saturation"]
    natural_sat = 0.4 - 4.0 * max(0.0, sat - 0.7) - 4.0 * max(0.0, 0.15 - sat)

    bold = 3.0 * (contrast - 0.22) + 0.6 * _log2(max(m, 5.0) / 50.0) - 0.8 * (f["hue_spread"] - 0.6)
    intricate = 1.5 * (f["detail"] - 0.8)
    unusual = 2.5 * (f["centre_distance"] - 0.15) + 1.2 * (f["hue_spread"] - 0.7)
    warm_light = 5.0 * f["warmth"] + 0.5 * f["vignetting"]
    dramatic = 3.0 * (contrast - 0.22) - 2.0 * (br - 0.45) + 1.0 * f["vignetting"]
    bright = 4.0 * (br - 0.45) - 3.0 * f["shadow_clip"]

    raw = {
        "sharp": sharp,
        "clean": clean,
        "unblocked": unblocked,
        "exposed": exposed,
        "unclipped": unclipped,
        "placed": placed,
        "balanced": balanced,
        "uncluttered": uncluttered,
        "level": level,
        "framed": framed,
        "separated": separated,
        "colourful": colourful,
        "vivid": vivid,
        "neutral": neutral,
        "toned": toned,
        "harmonious": harmonious,
        "natural_sat": natural_sat,
        "bold": bold,
        "intricate": intricate,
        "unusual": unusual,
        "warm_light": warm_light,
        "dramatic": dramatic,
        "bright": bright,
    }
    return {k: _clip(v) for k, v in raw.items()}  # bound extreme readings


@lru_cache(maxsize=65536)
def _hash_normals(*parts: str, n: int) -> tuple[float, ...]:
    """``n`` standard normals fixed by ``parts`` (the same inputs always give the same)."""
    key = "\x1f".join(parts).encode("utf-8")
    out = []
    for block in range((n + 7) // 8):  # a blake2b digest holds at most 64 bytes: 8 normals
        h = hashlib.blake2b(key + block.to_bytes(4, "big"), digest_size=64).digest()
        for i in range(min(8, n - 8 * block)):
            u = (int.from_bytes(h[8 * i : 8 * i + 8], "big") + 0.5) / 2.0**64
            out.append(_NORMAL.inv_cdf(u))
    return tuple(out)


@dataclass(frozen=True, eq=False)
class ScaleUse:
    """How a family turns its impression into an integer on a requested scale.

    On a canonical 1-10 scale the family's continuous answer is
    ``centre + spread * z``, squashed softly into [1, 10]; it is then mapped linearly onto
    the requested range, and an integer is drawn from a distribution centred on it whose
    width shrinks with temperature (temperature 0 gives the most likely integer).

    Attributes:
        centre: the answer for an ordinary image (z = 0), on 1-10.
        spread: points per unit of z on 1-10 (small = compressed scale use).
        favourites: canonical 1-10 values the family is drawn to, with their pull (logit).
        width: answer spread in 1-10 points at temperature 1.
        round_pull: pull toward multiples of 5 and 10 on wide (e.g. 0-100) scales.
    """

    centre: float
    spread: float
    favourites: Mapping[int, float] = field(default_factory=dict)
    width: float = 0.9
    round_pull: float = 0.6


@dataclass(frozen=True, eq=False)
class Family:
    """One simulated model family.

    Attributes:
        name: family name (``aurora``...).
        model_id: the model id at the endpoint (``sim-aurora-v1``...).
        character: one line describing the family.
        skill: per dimension, the correlation between the family's perceived value and
            its own pixel evidence (the rest is a per-image error fixed for the family).
        weights: per dimension, the weight of each cue in the family's evidence.
        defect_gain: how strongly negative cues (defects) weigh against positive ones.
        halo: share of the general impression that leaks into every dimension.
        taste: weights of the perceived dimensions in the family's overall verdict.
        scale: its scale use.
        noise: sd (in z) of sampling noise per unit of temperature.
        position_bias: logit pull toward ``preferred_slot`` in multi-image or lettered
            choices (0 = none).
        preferred_slot: the slot it is pulled toward: 0 = first, -1 = last.
        cue_acuity: 0-1, how sharply the family reads single cues (for criterion
            questions about one property, e.g. "which panel is less noisy").
        training: 0-1, the share of the trained read-out (``calibration``) in its evidence;
            the rest is its own cue weighting.
        shared_error: share of its per-image error variance common to all families
            (``SHARED_ERROR``; the calibration worlds vary it through a copy).
    """

    name: str
    model_id: str
    character: str
    skill: Mapping[str, float]
    weights: Mapping[str, Mapping[str, float]]
    defect_gain: float
    halo: float
    taste: Mapping[str, float]
    scale: ScaleUse
    noise: float
    position_bias: float
    preferred_slot: int
    cue_acuity: Mapping[str, float] = field(default_factory=dict)
    training: float = 0.7
    shared_error: float = SHARED_ERROR

    # -- evidence ----------------------------------------------------------------------

    def _shape(self, c: float) -> float:
        return c * self.defect_gain if c < 0 else c

    def evidence(self, features: Mapping[str, float]) -> dict[str, float]:
        """The family's noiseless pixel evidence per dimension, on about unit scale.

        A blend of the trained read-out shared by all families (``calibration``: what
        looking at many pictures teaches) and the family's own cue weighting (its
        character), in the proportion ``training``.
        """
        cv = cues(features)
        trained = ideal_weights()
        out = {}
        for dim in DIMENSIONS:
            w = self.weights[dim]
            norm = math.sqrt(sum(x * x for x in w.values())) or 1.0
            own = sum(wt * self._shape(cv[k]) for k, wt in w.items()) / norm
            readout = sum(wt * cv[k] for k, wt in trained[dim].items())
            t = self.training
            out[dim] = t * readout + (1.0 - t) * own
        return out

    def systematic_error(self, digest: str, dim: str) -> float:
        """The per-image error of this family on ``dim``: fixed by (image, family), with a
        share ``shared_error`` of its variance common to all families."""
        shared = _hash_normals("shared", digest, dim, n=1)[0]
        own = _hash_normals("own", self.name, digest, dim, n=1)[0]
        c = self.shared_error
        return math.sqrt(c) * shared + math.sqrt(1.0 - c) * own

    def perceive(
        self,
        features: Mapping[str, float],
        digest: str,
        rng: np.random.Generator | None,
        temperature: float,
    ) -> dict[str, float]:
        """Perceived values of the five dimensions on a common z-scale.

        Args:
            features: ``perception.features`` of the image (or crop).
            digest: the image's content digest (fixes the systematic error).
            rng: the request's generator; unused at temperature 0.
            temperature: sampling temperature; noise sd is ``noise * temperature``.
        """
        out = self._perceived_exactly(features, digest)
        if temperature > 0 and rng is not None:
            eps = rng.standard_normal(len(DIMENSIONS)) * (self.noise * temperature)
            out = {d: out[d] + float(e) for d, e in zip(DIMENSIONS, eps, strict=True)}
        return out

    def _perceived_exactly(self, features: Mapping[str, float], digest: str) -> dict[str, float]:
        """``perceive`` before sampling noise: fixed by (family, features, digest), so
        memoised (a copy is returned)."""
        memo = _PERCEIVED.get((self, features), digest)
        if memo is None:
            ev = self.evidence(features)
            own = {}
            for dim in DIMENSIONS:
                s = min(max(self.skill[dim], 0.0), 1.0)
                err = self.systematic_error(digest, dim)
                own[dim] = s * ev[dim] + math.sqrt(1.0 - s * s) * err
            general = sum(self.taste[d] * own[d] for d in DIMENSIONS) / sum(self.taste.values())
            memo = {d: (1.0 - self.halo) * own[d] + self.halo * general for d in DIMENSIONS}
            _PERCEIVED.put((self, features), digest, memo)
        return dict(memo)

    def perceive_cues(
        self,
        features: Mapping[str, float],
        digest: str,
        rng: np.random.Generator | None,
        temperature: float,
    ) -> dict[str, float]:
        """Perceived single cues (see ``CUES``), each with a fixed per-image error that
        shrinks with the family's ``cue_acuity`` and sampling noise at temperature > 0.

        Meant for questions about one property ("which panel is sharper?").
        """
        cv = cues(features)
        names = sorted(cv)
        errs = _hash_normals("cue", self.name, digest, n=len(names))
        out = {}
        for k, e in zip(names, errs, strict=True):
            a = min(max(self.cue_acuity.get(k, 0.5), 0.0), 1.0)
            out[k] = a * cv[k] + math.sqrt(1.0 - a * a) * e
        if temperature > 0 and rng is not None:
            eps = rng.standard_normal(len(names)) * (self.noise * temperature)
            out = {k: out[k] + float(x) for k, x in zip(names, eps, strict=True)}
        return out

    # -- verdicts ----------------------------------------------------------------------

    def holistic_z(self, perceived: Mapping[str, float]) -> float:
        """The family's overall verdict: its own taste over the perceived dimensions,
        rescaled to about unit spread (as if the dimensions correlated at 0.3)."""
        w, norm = self._taste_norm
        return sum(wt * perceived[d] for wt, d in zip(w, DIMENSIONS, strict=True)) / norm

    def impression(
        self, features: Mapping[str, float], digest: str, dimension: str | None, temperature: float
    ) -> tuple[float, float]:
        """The mean and sd of the impression ``z`` that ``perceive`` then ``holistic_z``
        (``dimension`` None) or the dimension itself give: the noise-free verdict, and
        the spread that sampling noise of sd ``noise * temperature`` per dimension gives
        it (``holistic_z`` is linear in the dimensions)."""
        perceived = self._perceived_exactly(features, digest)
        sd = self.noise * max(temperature, 0.0)
        if dimension:
            return perceived[dimension], sd
        w, norm = self._taste_norm
        return self.holistic_z(perceived), sd * math.sqrt(P.sum_in_order(x * x for x in w)) / norm

    @cached_property
    def _taste_norm(self) -> tuple[list[float], float]:
        """The taste weights in ``DIMENSIONS`` order and ``holistic_z``'s divisor."""
        w = [self.taste[d] for d in DIMENSIONS]
        total, sq = sum(w), sum(x * x for x in w)
        return w, math.sqrt(sq + 0.3 * (total * total - sq))

    def score_logits(self, z: float, lo: int, hi: int) -> list[float]:
        """The logit of each integer in [lo, hi] (``hi > lo``) for impression ``z``, before
        temperature: this family's scale use. ``to_scale`` samples from their softmax at
        the request's temperature; ``judgepanel_sim.judges.marginal`` integrates it."""
        sc = self.scale
        raw = sc.centre + sc.spread * z
        canon = 1.0 + 9.0 / (1.0 + P.exp_scalar(-(raw - 5.5) / 2.4))  # soft squash into [1, 10]
        unit, inv_two_var, pulls = _scale_terms(sc, lo, hi)
        target = lo + (canon - 1.0) * unit
        logits = []
        for k, terms in zip(range(lo, hi + 1), pulls, strict=True):
            logit = -((k - target) ** 2) * inv_two_var
            for term in terms:
                logit += term
            logits.append(logit)
        return logits

    def score_logits_grid(self, z: np.ndarray, lo: int, hi: int) -> np.ndarray:
        """`score_logits` for every impression of ``z`` at once: one row per impression.

        The same operations in the same order on each element (IEEE arithmetic and
        `judgepanel_sim.portable` functions, which give the same bits on arrays as on
        floats), so every row equals ``score_logits`` of its impression bit for bit.
        """
        sc = self.scale
        raw = sc.centre + sc.spread * np.asarray(z, dtype=np.float64)
        canon = 1.0 + 9.0 / (1.0 + P.exp(-(raw - 5.5) / 2.4))
        unit, inv_two_var, pulls = _scale_terms(sc, lo, hi)
        target = lo + (canon - 1.0) * unit
        out = np.empty((target.size, hi - lo + 1))
        for j, (k, terms) in enumerate(zip(range(lo, hi + 1), pulls, strict=True)):
            # Python's float power, as score_logits squares: libm's pow, which is not
            # always the product d * d in its last bit
            square = np.fromiter(
                map(pow, (k - target).tolist(), repeat(2)), np.float64, target.size
            )
            logit = -square * inv_two_var
            for term in terms:
                logit = logit + term
            out[:, j] = logit
        return out

    def to_scale(
        self,
        z: float,
        lo: int,
        hi: int,
        rng: np.random.Generator | None,
        temperature: float,
    ) -> int:
        """An integer answer in [lo, hi] for impression ``z``, with this family's scale use.

        At temperature 0 the answer is the most likely integer, so an identical request
        gives an identical answer.
        """
        if hi <= lo:
            return lo
        logits = self.score_logits(z, lo, hi)
        top = max(logits)
        if temperature <= 0 or rng is None:
            return lo + logits.index(top)
        weights = [P.exp_scalar((v - top) / temperature) for v in logits]
        u = float(rng.random()) * sum(weights)
        acc = 0.0
        for i, wt in enumerate(weights):
            acc += wt
            if u < acc:
                return lo + i
        return hi

    def pick(
        self,
        utilities: Sequence[float],
        rng: np.random.Generator | None,
        temperature: float,
        bias_scale: float = 1.0,
    ) -> int:
        """Choose a slot from per-slot utilities (z-scale), with this family's pull toward
        ``preferred_slot``; returns the index. Temperature 0 takes the best logit."""
        u = np.asarray(utilities, dtype=np.float64).copy()
        if u.size == 0:
            raise ValueError("pick() needs at least one slot")
        u[self.preferred_slot] += self.position_bias * bias_scale
        if temperature <= 0 or rng is None:
            return int(np.argmax(u))
        p = P.exp((u - u.max()) / max(temperature, 1e-3))
        p /= p.sum()
        return int(rng.choice(u.size, p=p))


@lru_cache(maxsize=1024)
def _scale_terms(
    sc: ScaleUse, lo: int, hi: int
) -> tuple[float, float, tuple[tuple[float, ...], ...]]:
    """What ``Family.to_scale`` needs that does not depend on the impression: the width of
    one canonical point on [lo, hi], the Gaussian's ``1 / (2 var)``, and per integer the
    logit pulls it adds in turn (favourite values, then round numbers on wide scales)."""
    span = hi - lo
    unit = span / 9.0
    inv_two_var = 1.0 / (2.0 * (sc.width * unit) ** 2)
    favourites = tuple(sc.favourites.items())
    pulls = []
    for k in range(lo, hi + 1):
        canon_k = 1.0 + (k - lo) / unit
        terms = []
        for fav, pull in favourites:
            d = canon_k - fav
            if -1.5 < d < 1.5:
                terms.append(pull * P.exp_scalar(-(d * d) / 0.18))
        if span >= 20:
            terms.append(sc.round_pull * ((k % 10 == 0) + 0.5 * (k % 5 == 0)))
        pulls.append(tuple(terms))
    return unit, inv_two_var, tuple(pulls)


def _w(**kw: float) -> dict[str, float]:
    return dict(kw)


FAMILIES: dict[str, Family] = {
    "aurora": Family(
        name="aurora",
        model_id="sim-aurora-v1",
        training=0.85,
        character="the generalist: most skilled overall, generous, heavy use of 7 and 8",
        skill=_w(quality=0.85, composition=0.7, colour=0.8, distinctiveness=0.4, emotion=0.35),
        weights={
            "quality": _w(sharp=1.0, clean=0.7, unblocked=0.6, exposed=0.5, unclipped=0.4),
            "composition": _w(
                placed=0.8, balanced=0.5, uncluttered=0.8, level=0.6, framed=0.5, separated=0.4
            ),
            "colour": _w(colourful=0.8, neutral=0.7, toned=0.7, harmonious=0.6, natural_sat=0.4),
            "distinctiveness": _w(bold=0.6, intricate=0.5, unusual=0.5, uncluttered=0.3),
            "emotion": _w(warm_light=0.5, dramatic=0.5, colourful=0.4, separated=0.3),
        },
        defect_gain=1.2,
        halo=0.15,
        taste=_w(quality=0.2, composition=0.3, colour=0.3, distinctiveness=0.1, emotion=0.1),
        scale=ScaleUse(centre=6.5, spread=1.6, favourites={7: 0.5, 8: 0.4}, width=0.8),
        noise=0.25,
        position_bias=0.15,
        preferred_slot=0,
        cue_acuity=_w(
            sharp=0.85,
            clean=0.75,
            unblocked=0.7,
            exposed=0.8,
            unclipped=0.7,
            colourful=0.8,
            neutral=0.75,
            toned=0.75,
            placed=0.65,
            level=0.65,
            uncluttered=0.7,
        ),
    ),
    "basalt": Family(
        name="basalt",
        model_id="sim-basalt-v1",
        training=0.8,
        character="the technician: reads sharpness, noise and compression best; weak on "
        "composition; taste dominated by technical quality; compressed scale",
        skill=_w(quality=0.92, composition=0.45, colour=0.6, distinctiveness=0.3, emotion=0.25),
        weights={
            "quality": _w(sharp=1.0, clean=1.0, unblocked=0.9, exposed=0.4, unclipped=0.4),
            "composition": _w(framed=0.8, level=0.7, separated=0.6, placed=0.3),
            "colour": _w(neutral=0.9, toned=0.8, colourful=0.4, unclipped=0.4),
            "distinctiveness": _w(intricate=0.9, sharp=0.4, bold=0.3),
            "emotion": _w(dramatic=0.6, toned=0.4, bold=0.3),
        },
        defect_gain=1.5,
        halo=0.1,
        taste=_w(quality=0.55, composition=0.15, colour=0.15, distinctiveness=0.1, emotion=0.05),
        scale=ScaleUse(centre=5.8, spread=1.1, favourites={6: 0.3}, width=0.7),
        noise=0.3,
        position_bias=0.35,
        preferred_slot=-1,
        cue_acuity=_w(
            sharp=0.95,
            clean=0.92,
            unblocked=0.9,
            exposed=0.8,
            unclipped=0.8,
            neutral=0.7,
            toned=0.65,
            placed=0.35,
            level=0.6,
            uncluttered=0.4,
        ),
    ),
    "cobalt": Family(
        name="cobalt",
        model_id="sim-cobalt-v1",
        training=0.75,
        character="the colourist: strong on colour and tone but loves saturation without "
        "limit; harsh, uses the whole scale; strong pull toward the first slot",
        skill=_w(quality=0.72, composition=0.5, colour=0.88, distinctiveness=0.35, emotion=0.35),
        weights={
            "quality": _w(exposed=0.9, sharp=0.9, unclipped=0.7, unblocked=0.5, clean=0.3),
            "composition": _w(balanced=0.7, placed=0.5, uncluttered=0.5, separated=0.3),
            "colour": _w(vivid=1.0, harmonious=0.9, neutral=0.6, toned=0.5),
            "distinctiveness": _w(bold=0.8, vivid=0.5, unusual=0.3),
            "emotion": _w(vivid=0.6, warm_light=0.5, bold=0.4),
        },
        defect_gain=1.0,
        halo=0.2,
        taste=_w(quality=0.15, composition=0.2, colour=0.45, distinctiveness=0.1, emotion=0.1),
        scale=ScaleUse(centre=5.2, spread=1.9, favourites={}, width=1.0),
        noise=0.4,
        position_bias=0.6,
        preferred_slot=0,
        cue_acuity=_w(
            vivid=0.9,
            colourful=0.85,
            neutral=0.85,
            toned=0.8,
            harmonious=0.8,
            exposed=0.8,
            sharp=0.55,
            clean=0.4,
            unblocked=0.45,
            placed=0.45,
            level=0.4,
        ),
    ),
    "dune": Family(
        name="dune",
        model_id="sim-dune-v1",
        training=0.8,
        character="the compositionist: strong on placement, balance, clutter and tilt; blind "
        "to noise; taste led by composition and mood; sticks to the middle of the scale",
        skill=_w(quality=0.7, composition=0.85, colour=0.55, distinctiveness=0.4, emotion=0.4),
        weights={
            "quality": _w(sharp=1.0, exposed=0.6, unblocked=0.5, unclipped=0.4),
            "composition": _w(
                placed=1.0, balanced=0.8, uncluttered=0.9, level=0.9, framed=0.7, separated=0.5
            ),
            "colour": _w(toned=0.8, colourful=0.6, harmonious=0.4),
            "distinctiveness": _w(unusual=0.7, uncluttered=0.4, bold=0.4),
            "emotion": _w(dramatic=0.7, warm_light=0.5, separated=0.4),
        },
        defect_gain=1.1,
        halo=0.2,
        taste=_w(quality=0.1, composition=0.45, colour=0.1, distinctiveness=0.1, emotion=0.25),
        scale=ScaleUse(centre=5.6, spread=1.0, favourites={5: 0.3, 6: 0.3}, width=0.8),
        noise=0.3,
        position_bias=0.3,
        preferred_slot=0,
        cue_acuity=_w(
            placed=0.9,
            balanced=0.85,
            uncluttered=0.85,
            level=0.9,
            framed=0.8,
            sharp=0.65,
            clean=0.2,
            unblocked=0.4,
            exposed=0.6,
            colourful=0.55,
            toned=0.6,
        ),
    ),
    "ember": Family(
        name="ember",
        model_id="sim-ember-v1",
        training=0.65,
        character="the impressionist: least skilled, strong halo, taste led by emotion, "
        "expansive scale, most sampling noise, strongest position bias",
        skill=_w(quality=0.68, composition=0.45, colour=0.55, distinctiveness=0.3, emotion=0.4),
        weights={
            "quality": _w(sharp=1.0, bright=0.4, exposed=0.4, unblocked=0.4, clean=0.3),
            "composition": _w(balanced=0.6, placed=0.4, separated=0.6),
            "colour": _w(vivid=0.7, warm_light=0.6, toned=0.5),
            "distinctiveness": _w(bold=0.6, vivid=0.5, dramatic=0.4),
            "emotion": _w(warm_light=0.8, dramatic=0.6, vivid=0.5),
        },
        defect_gain=0.8,
        halo=0.35,
        taste=_w(quality=0.1, composition=0.15, colour=0.25, distinctiveness=0.15, emotion=0.35),
        scale=ScaleUse(centre=6.0, spread=2.3, favourites={9: 0.4, 2: 0.3}, width=1.1),
        noise=0.5,
        position_bias=0.8,
        preferred_slot=0,
        cue_acuity=_w(
            sharp=0.6,
            clean=0.45,
            unblocked=0.4,
            exposed=0.6,
            vivid=0.7,
            warm_light=0.7,
            colourful=0.55,
            placed=0.4,
            level=0.4,
        ),
    ),
}
"""The five families, by name."""

_BY_MODEL = {f.model_id: f for f in FAMILIES.values()}


def family_for_model(model_id: str) -> Family:
    """The family behind ``model_id`` (KeyError naming the known ids otherwise)."""
    try:
        return _BY_MODEL[model_id]
    except KeyError:
        known = ", ".join(sorted(_BY_MODEL))
        raise KeyError(f"no simulated family serves model {model_id!r}; known: {known}") from None
