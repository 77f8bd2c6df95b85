"""Latent cues: the visible image properties a simulated judge can read by name.

A rubric other than the seed's may ask about a property such as "symmetry" or
"brightness". When a synthetic world declares a latent of that name, it renders it into
the pixels; the judges never see the latent, only the pixels, so they read it back
through a *latent cue*: a fixed reading of pixel features (``perception.FEATURES``, the
family cues of ``families.CUES``, or a reading of this module's own, such as mirror
symmetry) put on a rough z-scale (0 an ordinary image, +1 clearly more of the property).

``LATENT_CUES`` is the registry. A dimension is read from the cue whose name or alias
appears in its title (first) or in what it asks (then); a world that wants a new latent
read back renders it so that one of these cues moves, or adds an entry here. Names and
directions are part of the interface; add entries freely, rename none.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from judgepanel_sim.judges.families import cues
from judgepanel_sim.judges.protocol import ImageView

Reading = Callable[[ImageView], float]


@dataclass(frozen=True)
class LatentCue:
    """One nameable property and how the judges read it from pixels.

    Attributes:
        name: the latent's name, as a world declares it (lower case).
        aliases: other words a rubric may use for it (the name is always one).
        meaning: what the reading measures, in one phrase (for the self-description).
        read: the raw reading of an image, in the units of ``centre`` and ``spread``.
        centre: the raw reading of an ordinary image.
        spread: raw units per unit of z.
    """

    name: str
    aliases: tuple[str, ...]
    meaning: str
    read: Reading
    centre: float = 0.0
    spread: float = 1.0

    def z(self, image: ImageView) -> float:
        """The reading on the z-scale, bounded to [-3.5, 3.5] (extreme pictures)."""
        v = (self.read(image) - self.centre) / self.spread
        return min(max(v, -3.5), 3.5)

    @property
    def words(self) -> tuple[str, ...]:
        """Every word or phrase that names this cue in a rubric."""
        return (self.name, *self.aliases)


def _feature(name: str, sign: float = 1.0) -> Reading:
    """A reading of one ``perception`` feature (negated for an opposite property)."""
    return lambda image: sign * float(image.features[name])


def _cue(mix: Mapping[str, float]) -> Reading:
    """A weighted sum of the family cues (already on a z-scale)."""
    items = tuple(mix.items())
    return lambda image: sum(w * cues(image.features)[k] for k, w in items)


def _clutter(image: ImageView) -> float:
    """Competing salient regions and edge density: more of both is a busier frame."""
    f = image.features
    return math.log2(1.0 + f["blob_count"]) + 8.0 * f["edge_density"]


def _mirror_symmetry(rgb: np.ndarray) -> float:
    """Correlation of the luminance with its left-right mirror image (-1 to 1), each row
    taken about its own mean, so only left-right structure counts.

    Computed on a block-averaged copy of at most 96 px on the long side: symmetry is a
    coarse property, and the reduction makes noise and fine texture irrelevant.
    """
    y = rgb.astype(np.float64) @ np.array([0.299, 0.587, 0.114])
    step = max(1, max(y.shape) // 96)
    h, w = (y.shape[0] // step) * step, (y.shape[1] // step) * step
    y = y[:h, :w].reshape(h // step, step, w // step, step).mean(axis=(1, 3))
    a = y - y.mean(axis=1, keepdims=True)  # a vertical gradient (sky) is not symmetry
    b = a[:, ::-1]
    denom = float(np.sqrt((a * a).sum() * (b * b).sum()))
    return float((a * b).sum() / denom) if denom > 1e-9 else 1.0


def _symmetry(image: ImageView) -> float:
    return float(image.derived("latent:mirror_symmetry", _mirror_symmetry))


def _entries() -> tuple[LatentCue, ...]:
    clutter = ("clutter", ("cluttered", "busyness", "busy"), "competing regions and edges")
    return (
        LatentCue(
            "brightness",
            ("bright", "lightness", "luminosity", "luminance"),
            "mean luminance",
            _feature("brightness"),
            0.45,
            0.15,
        ),
        LatentCue(
            "darkness",
            ("dark", "gloom", "gloominess", "low key"),
            "mean luminance, reversed",
            _feature("brightness", -1.0),
            -0.45,
            0.15,
        ),
        LatentCue(
            "saturation",
            ("saturated", "chroma intensity"),
            "mean HSV saturation",
            _feature("saturation"),
            0.4,
            0.15,
        ),
        LatentCue(
            "vividness",
            ("vivid", "vibrancy", "vibrant"),
            "colourfulness, more is more",
            _cue({"vivid": 1.0}),
        ),
        LatentCue("contrast", ("contrasty",), "luminance spread", _feature("contrast"), 0.18, 0.07),
        LatentCue("warmth", ("warm",), "red over blue balance", _feature("warmth"), 0.0, 0.1),
        LatentCue(
            "coolness",
            ("cool", "coldness"),
            "blue over red balance",
            _feature("warmth", -1.0),
            0.0,
            0.1,
        ),
        LatentCue(
            "texture",
            ("textured", "detail", "detailed", "intricacy", "intricate"),
            "mid-band texture energy",
            _feature("detail"),
            0.6,
            0.35,
        ),
        LatentCue(clutter[0], clutter[1], clutter[2], _clutter, 3.0, 1.0),
        LatentCue(
            "simplicity",
            ("simple", "minimalism", "minimalist", "minimal", "uncluttered"),
            "competing regions and edges, reversed",
            lambda image: -_clutter(image),
            -3.0,
            1.0,
        ),
        LatentCue(
            "symmetry",
            ("symmetric", "symmetrical", "mirror"),
            "left-right mirror similarity of the luminance",
            _symmetry,
            0.0,
            0.3,
        ),
        LatentCue(
            "clarity",
            ("crispness", "crisp", "sharp"),
            "edge crispness and clean flat areas",
            _cue({"sharp": 0.6, "clean": 0.4}),
        ),
        LatentCue(
            "blur", ("blurriness", "blurry", "softness"), "edge width", _cue({"sharp": -1.0})
        ),
        LatentCue("grain", ("grainy", "graininess"), "noise in flat areas", _cue({"clean": -1.0})),
        LatentCue(
            "harmony", ("harmonious",), "hues in one harmony template", _cue({"harmonious": 1.0})
        ),
        LatentCue(
            "hue variety",
            ("variety of hues", "hue diversity", "multicoloured", "multicolored"),
            "circular spread of hue",
            _feature("hue_spread"),
            0.6,
            0.2,
        ),
        LatentCue(
            "balance", ("balanced",), "visual weight even across the frame", _cue({"balanced": 1.0})
        ),
        LatentCue(
            "levelness", ("straightness", "horizon"), "lines level or plumb", _cue({"level": 1.0})
        ),
        LatentCue(
            "centring",
            ("centering", "centred", "centered", "centrality"),
            "subject near the frame centre",
            _feature("centre_distance", -1.0),
            -0.15,
            0.1,
        ),
        LatentCue("vignetting", ("vignette",), "darker corners", _feature("vignetting"), 0.05, 0.1),
        LatentCue(
            "subject size",
            ("prominence", "subject prominence"),
            "area of the main salient region",
            lambda image: math.log2(max(float(image.features["subject_size"]), 1e-3)),
            -3.3,
            1.0,
        ),
    )


LATENT_CUES: dict[str, LatentCue] = {c.name: c for c in _entries()}
"""The registry: latent name -> how the judges read it (see the module docstring)."""


def _word_pattern(word: str) -> re.Pattern[str]:
    parts = [re.escape(p) for p in word.split()]
    return re.compile(r"\b" + r"[\s-]+".join(parts) + r"\b", re.I)


_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (_word_pattern(word), cue.name) for cue in LATENT_CUES.values() for word in cue.words
)


def _first_named(text: str) -> str | None:
    """The cue named earliest in ``text`` (a longer phrase wins at the same place)."""
    best: tuple[int, int, str] | None = None
    for pat, name in _PATTERNS:
        m = pat.search(text)
        if m and (best is None or (m.start(), -len(m.group())) < best[:2]):
            best = (m.start(), -len(m.group()), name)
    return best[2] if best else None


@lru_cache(maxsize=512)
def find_latent(title: str, asks: str = "") -> LatentCue | None:
    """The latent cue a dimension names: the title's own (exact name, then the first
    name or alias in it), else the first one named in what the dimension asks."""
    key = " ".join(title.lower().split())
    if key in LATENT_CUES:
        return LATENT_CUES[key]
    name = _first_named(title) or _first_named(asks)
    return LATENT_CUES[name] if name else None


def latents_table() -> str:
    """The registry as a markdown table (name, other words, what is read): the world
    card's list of the latents a world may declare and have read back."""
    lines = ["| latent | also named | read from the pixels as |", "|---|---|---|"]
    for cue in LATENT_CUES.values():
        lines.append(f"| {cue.name} | {', '.join(cue.aliases) or '-'} | {cue.meaning} |")
    return "\n".join(lines)
