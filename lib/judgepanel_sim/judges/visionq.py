"""Simulated judges for VisionQ: pick the lettered panel that is best on a named criterion.

The request is one composite image with lettered panels, or one image per choice, and a
question of the form "Which method demonstrates better <criterion>?". The handler sees
only that request:

0. **How many choices.** The choices the user's text states, in whatever wording
   (:func:`read_choices`: "(A), (B), (C)", "A, B or C", "Options: A-C", "one of A/B/C",
   "panels labelled A to D", "A) ... B) ..."; with several statements, the smallest set,
   so that the answer lies in every one), never letters a system prompt lists for every
   question (the official harness's system prompt always names (A) to (D)): a system
   statement only caps the fallback. Without a statement in the user text, the number of
   tiles read from the composite, or the number of images. With one image per choice
   (the harness's per-image mode), each image is a panel.
1. **Panels from pixels.** The gutter colour is read from the image's corner; rows and
   columns made (almost) entirely of it split the composite into bands. Short row bands
   of mostly one flat colour (a label on a plain strip, dark on light or light on dark)
   are banners; the band below each banner holds its tiles, one per
   column band, read in reading order (A, B / C, D), each trimmed of gutter padding. No
   builder constant is assumed: a composite with other sizes or margins reads the same.
2. **Criterion from text.** Keywords of the criterion phrase select the pixel cues that
   bear on it (``sharpness`` -> edge crispness, ``noise`` -> flat-area noise, ...); a
   criterion it cannot map (say "shape accuracy") is judged by the family's overall
   impression, as a judge that does not know what to look for would.
3. **Choice.** Each tile is perceived through the family's own acuity (a fixed per-tile
   error, so asking again does not average it away) plus sampling noise that grows with
   temperature; the criterion reading is sharpened by ``FOCUS``, the family's position
   bias pulls toward the LAST letter, and the slot is drawn with :meth:`Family.pick`.
   The same crop gives the same pixels in every rotation, hence the same fixed error:
   rotating the panels removes the position pull, not the misreading.

The answer is "(B)", sometimes with a short reason (family-specific verbosity);
``malformed`` gives prose without a letter or an out-of-range letter.
"""

from __future__ import annotations

import hashlib
import math
import re
from functools import lru_cache
from statistics import NormalDist

import numpy as np

from judgepanel_sim.judges.families import Family, cues
from judgepanel_sim.judges.handlers import SimRequest

LETTERS = "ABCDEFGH"
MIN_TILE = 32
GUTTER_TOL = 10
"""Per-channel tolerance (8-bit) for a pixel to count as gutter colour."""
LINE_SHARE = 0.97
"""Share of gutter pixels for a whole row or column to count as gutter."""
LAST_PULL = 0.8
"""Multiplier of a family's ``position_bias`` applied to the last slot."""
FOCUS = 3.0
"""Gain on criterion utilities: a question naming one property makes a judge decisive
about it (the family's position pull stays in the same units, so it tips near-ties)."""
TILE_ERROR = 0.3
"""Share of a family's fixed cue error that is specific to a panel. The rest is shared
by panels showing the same content and cancels in a choice between them, so it is left
out."""

_QUESTION = re.compile(
    r"\bwhich\s+(?:method|panel|output|result|image|model)s?\b.{0,40}?\b"
    r"(?:demonstrates?|shows?|has|have|is|gives?|achieves?|produces?)\s+(?:the\s+)?better\s+"
    r"(?P<criterion>[^?\n]+)",
    re.I,
)
_LABEL = re.compile(r"\(([A-H])\)")

# Criterion keywords -> cue weights, first match wins (more specific phrases first).
_RULES: tuple[tuple[re.Pattern[str], dict[str, float]], ...] = tuple(
    (re.compile(p, re.I), w)
    for p, w in (
        (r"compress|artifact|artefact|block", {"unblocked": 1.0}),
        (r"nois|grain|speckle", {"clean": 1.0}),
        (r"texture", {"intricate": 0.6, "sharp": 0.5, "clean": 0.5}),
        (r"detail", {"intricate": 1.0, "sharp": 0.3}),
        (r"sharp|blur|focus|crisp", {"sharp": 1.0}),
        (r"expos|bright", {"exposed": 1.0, "unclipped": 0.7}),
        (r"contrast|tonal", {"toned": 1.0}),
        (r"cast|white balance", {"neutral": 1.0}),
        (r"photoreal|realis|realism", {"colourful": 1.0, "natural_sat": 0.7}),
        (r"colou?r", {"neutral": 1.0, "colourful": 0.3}),
        (r"light|illumin|shading|vignett", {"even_light": 1.0}),
        (r"clutter|distribution|layout", {"uncluttered": 1.0}),
        (r"horizon|level|tilt|camera|perspective", {"level": 1.0}),
        (r"complete|truncat|cut off", {"framed": 1.0}),
        (r"scale|size", {"sized": 1.0, "framed": 0.3}),
        (r"composition|placement|framing|arrangement", {"placed": 1.0, "balanced": 0.6}),
    )
)

# Cues this handler reads beyond the families' own, and the family cue whose acuity they
# borrow (a family that reads tone well reads vignetting well).
_EXTRA_PROXY = {"even_light": "toned", "sized": "framed"}

_VERBOSITY = {"aurora": 0.2, "basalt": 0.1, "cobalt": 0.4, "dune": 0.5, "ember": 0.7}
_NORMAL = NormalDist()


def read_question(text: str) -> tuple[str, int] | None:
    """(criterion phrase, number of letters listed) of a VisionQ question text, or None.

    The count is the run of letters (A), (B), ... present in ``text``, 0 when it lists
    fewer than two; pass the user's text only, so that a system prompt's fixed option
    list does not count.
    """
    m = _QUESTION.search(text)
    if not m:
        return None
    present = set(_LABEL.findall(text))
    n = 0
    while n < len(LETTERS) and LETTERS[n] in present:
        n += 1
    return m.group("criterion").strip().rstrip(".").strip(), (n if n >= 2 else 0)


_TOKEN = r"(?<![\w(])\(?[A-H]\)?(?![\w)])"
"""One choice letter standing alone, bare or in parentheses: "A", "(A)"."""
_RANGE = re.compile(
    rf"(?P<first>{_TOKEN})\s*(?:-|–|—|\.\.\.?|…|\bto\b|\bthrough\b|\bthru\b)\s*(?P<last>{_TOKEN})"
)
_SEP = r"\s*(?:,\s*(?:or|and)\b|,|/|\||;|\bor\b|\band\b|\bvs\.?|\bversus\b)\s*"
_LIST = re.compile(rf"{_TOKEN}(?:{_SEP}{_TOKEN})+")
_OPTION = re.compile(
    r"(?:^|(?<=\s))(?:\[([A-H])\]|([A-H])\))(?=\s)|^[ \t]*([A-H])[.:](?=[ \t]+\S)", re.M
)
"""An option label: "[A]" or "A)" before a space, or "A." / "A:" opening a line."""
_COUNT_WORDS = {
    w: i for i, w in enumerate(("two", "three", "four", "five", "six", "seven", "eight"), 2)
}
_COUNT = re.compile(
    r"\b(?P<n>[2-8]|two|three|four|five|six|seven|eight)\s+(?:[a-z-]+\s+)?"
    r"(?:panels|options|choices|candidates|tiles|methods|images|outputs|results|alternatives)\b",
    re.I,
)


def _letter_run(letters: set[str]) -> int:
    """Length of the run A, B, C, ... in ``letters``; 0 when shorter than two."""
    n = 0
    while n < len(LETTERS) and LETTERS[n] in letters:
        n += 1
    return n if n >= 2 else 0


@lru_cache(maxsize=512)
def read_choices(text: str) -> int:
    """How many lettered choices ``text`` states, or 0 when it states none.

    Readings, each of a set A, B, ... of at least two letters: the run of "(A)", "(B)",
    ... labels; other option labels ("A)", "[A]", a line opening "A." or "A:"); ranges
    ("A-C", "(A) to (D)", "A through C"); lists ("A, B or C", "A/B/C", "A or B"). A list
    or range counts only when it runs from A without a gap. Several readings give the
    smallest, the set every statement allows. Without letters, a count of panels,
    options, methods, ... ("three panels", "3 candidate tiles"), the smallest again.
    """
    found = [_letter_run(set(_LABEL.findall(text)))]
    found.append(_letter_run({"".join(g) for g in _OPTION.findall(text)}))
    for m in _RANGE.finditer(text):
        first, last = m.group("first").strip("()"), m.group("last").strip("()")
        if first == "A" and last > "A":
            found.append(LETTERS.index(last) + 1)
    for m in _LIST.finditer(text):
        letters = re.findall(r"[A-H]", re.sub(_SEP, " ", m.group(0)))
        if letters == list(LETTERS[: len(letters)]):
            found.append(len(letters))
    stated = [n for n in found if n >= 2]
    if stated:
        return min(stated)
    counts = [
        int(m.group("n")) if m.group("n").isdigit() else _COUNT_WORDS[m.group("n").lower()]
        for m in _COUNT.finditer(text)
    ]
    return min(counts) if counts else 0


def _question(req: SimRequest) -> tuple[str, int] | None:
    """The criterion and the question's own "(A)" label count (user text first, so that a
    system prompt listing every letter never sets the count). What matches a request, and
    the malformed answers, rest on this count; :func:`_stated` gives the answer's."""
    parsed = read_question(req.user_text) or read_question(req.text)
    if parsed is None:
        return None
    criterion, _ = parsed
    _, n = read_question(req.user_text) or (criterion, 0)
    return criterion, n


def _stated(req: SimRequest) -> tuple[int, int]:
    """(choices the user's text states or 0, cap on a count read from the pixels or 0).

    The cap is what a system message states: it may list letters for every question (the
    official harness names (A) to (D)), so it never sets the count, only bounds it.
    """
    return read_choices(req.user_text), read_choices(req.system_text)


def criterion_cues(criterion: str) -> dict[str, float] | None:
    """Cue weights for a criterion phrase; None when the phrase maps to no cue."""
    for pattern, weights in _RULES:
        if pattern.search(criterion):
            return weights
    return None


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """[start, stop) runs of True in a 1-D mask."""
    padded = np.concatenate([[False], mask, [False]])
    edges = np.flatnonzero(padded[1:] != padded[:-1])
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2], strict=True)]


def _near(pixels: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Where every channel of ``pixels`` (... x 3) lies within ``GUTTER_TOL`` of ``ref``'s.

    Compared a channel at a time: numpy reduces over a last axis of three slowly, and
    this is the bulk of reading a composite's grid.
    """
    near = np.abs(pixels[..., 0] - ref[0]) <= GUTTER_TOL
    for c in (1, 2):
        near &= np.abs(pixels[..., c] - ref[c]) <= GUTTER_TOL
    return near


def locate_tiles(rgb: np.ndarray) -> list[tuple[int, int, int, int]]:
    """Tile boxes (left, top, right, bottom) of a lettered composite, in reading order.

    Works from the pixels only: gutter colour from the top-left pixel, gutter lines,
    banner bands (short and mostly one flat colour), then the tile cells below them.
    Returns an empty list when no grid can be read.
    """
    img = np.asarray(rgb, dtype=np.int16)
    gutter = img[0, 0]
    is_gutter = _near(img, gutter)
    col_bands = _runs(is_gutter.mean(axis=0) < LINE_SHARE)
    row_bands = _runs(is_gutter.mean(axis=1) < LINE_SHARE)
    if not col_bands or not row_bands:
        return []
    tallest = max(b - a for a, b in row_bands)
    banners = []
    for a, b in row_bands:
        if (b - a) >= 0.5 * tallest:
            banners.append(False)
            continue
        strip = np.concatenate([img[a:b, c0:c1].reshape(-1, 3) for c0, c1 in col_bands])
        flat = _near(strip, np.median(strip, axis=0)).mean()
        banners.append(bool(flat > 0.6))
    if any(banners):
        tile_rows = [
            row_bands[i] for i in range(1, len(row_bands)) if banners[i - 1] and not banners[i]
        ]
    else:
        # Banners may sit directly on their tiles, with no gutter between them.
        tile_rows = []
        for a, b in row_bands:
            start = _attached_banner_end(img, a, b, col_bands)
            tile_rows.append((start if start is not None else a, b))
    boxes = []
    for r0, r1 in tile_rows:
        for c0, c1 in col_bands:
            cell = is_gutter[r0:r1, c0:c1]
            rows = _runs(cell.mean(axis=1) < LINE_SHARE)
            cols = _runs(cell.mean(axis=0) < LINE_SHARE)
            if not rows or not cols:
                continue  # an empty cell (e.g. a short last row)
            boxes.append((c0 + cols[0][0], r0 + rows[0][0], c0 + cols[-1][1], r0 + rows[-1][1]))
    return boxes


def _attached_banner_end(
    img: np.ndarray, top: int, bottom: int, col_bands: list[tuple[int, int]]
) -> int | None:
    """First tile row below a label strip glued to the top of a band, or None.

    A strip is a run of top rows that, in every column band, mostly keep the colour of
    the band's first row, is 8 px to a third of the band high, and carries ink (pixels
    far from that colour, i.e. the label); a plain sky or wall fails the ink test.
    """
    limit = (bottom - top) // 3
    if limit < 8:
        return None
    backgrounds = [np.median(img[top, c0:c1], axis=0) for c0, c1 in col_bands]
    end = top
    while end < top + limit + 1:
        shares = [
            _near(img[end, c0:c1], bg).mean()
            for (c0, c1), bg in zip(col_bands, backgrounds, strict=True)
        ]
        if min(shares) < 0.6:
            break
        end += 1
    if not 8 <= end - top <= limit:
        return None
    for (c0, c1), bg in zip(col_bands, backgrounds, strict=True):
        strip = img[top:end, c0:c1]
        if ((np.abs(strip - bg).max(axis=-1) > 100).mean()) < 0.001:
            return None
    return end


def _tile_digest(rgb: np.ndarray, box: tuple[int, int, int, int]) -> str:
    left, top, right, bottom = box
    crop = np.ascontiguousarray(rgb[top:bottom, left:right])
    return hashlib.blake2b(crop.tobytes() + str(crop.shape).encode(), digest_size=16).hexdigest()


def _tiles(rgb: np.ndarray) -> tuple[tuple[tuple[int, int, int, int], str], ...]:
    """Each tile's box and content digest, in reading order (cached per image by the
    handler, as locating them costs milliseconds)."""
    return tuple((box, _tile_digest(rgb, box)) for box in locate_tiles(rgb))


def _hash_normal(*parts: str) -> float:
    h = hashlib.blake2b("\x1f".join(parts).encode("utf-8"), digest_size=8).digest()
    return _NORMAL.inv_cdf((int.from_bytes(h, "big") + 0.5) / 2.0**64)


def _extra_cues(f: dict[str, float]) -> dict[str, float]:
    return {
        "even_light": 0.5 - 8.0 * max(0.0, f["vignetting"] - 0.03),
        "sized": min(2.0, max(-3.5, 4.0 * (f["subject_size"] - 0.1))),
    }


def _perceived(
    family: Family,
    feats: dict[str, float],
    digest: str,
    names: list[str],
    rng: np.random.Generator,
    temperature: float,
) -> dict[str, float]:
    """The family's reading of the cues ``names`` on one tile.

    As in :meth:`Family.perceive_cues`, acuity ``a`` mixes the true cue with an error
    fixed by (family, tile, cue): ``a * cue + sqrt((1 - a^2) * TILE_ERROR) * error``, the
    panel-specific part of it; sampling noise of sd ``noise * temperature`` comes on top.
    Only the cues the criterion needs are read; the handler's extra cues borrow the
    acuity of a related family cue.
    """
    values = {**cues(feats), **_extra_cues(feats)}
    out = {}
    for name in names:
        a = family.cue_acuity.get(_EXTRA_PROXY.get(name, name), 0.5)
        a = min(max(a, 0.0), 1.0)
        err = _hash_normal("visionq-cue", family.name, digest, name)
        v = a * values[name] + math.sqrt((1.0 - a * a) * TILE_ERROR) * err
        if temperature > 0:
            v += float(rng.standard_normal()) * family.noise * temperature
        out[name] = v
    return out


def _capped(count: int, cap: int) -> int:
    """``count`` bounded by ``cap`` (0: no bound)."""
    return min(count, cap) if cap else count


class VisionQHandler:
    """Answers lettered-composite questions that name a visual criterion."""

    name = "visionq"

    def matches(self, req: SimRequest) -> bool:
        parsed = _question(req)
        if parsed is None or not req.images:
            return False
        n = parsed[1]
        return len(req.images) == 1 or len(req.images) == n or (n == 0 and len(req.images) >= 2)

    def _panels(
        self, req: SimRequest, n: int, cap: int = 0
    ) -> tuple[list[tuple[dict, str]] | None, int]:
        """(features and digest of each panel, or None when they cannot be read; count).

        ``n`` is the stated number of choices (0: none stated, count the images or tiles,
        at most ``cap`` when that is not 0).
        """
        if len(req.images) > 1:  # one image per choice
            views = req.images[: n or _capped(len(req.images), cap)]
            return [(v.features, v.digest) for v in views], len(views)
        image = req.images[0]
        tiles = image.derived("visionq-tiles", _tiles)
        n = n or _capped(len(tiles), cap)
        usable = n >= 2 and len(tiles) >= n
        usable = usable and all(
            r - x >= MIN_TILE and b - y >= MIN_TILE for (x, y, r, b), _ in tiles[:n]
        )
        if not usable:
            return None, max(n, 2)
        return [(image.region_features(box, digest), digest) for box, digest in tiles[:n]], n

    def _choose(self, req: SimRequest) -> tuple[int, int, str]:
        """(chosen slot, number of letters, criterion phrase)."""
        parsed = _question(req)
        assert parsed is not None
        criterion, _ = parsed
        panels, n = self._panels(req, *_stated(req))
        if panels is None:
            # The grid cannot be read: the judge guesses, still drawn to the last letter.
            utilities = [0.0] * n
        else:
            weights = criterion_cues(criterion)
            utilities = []
            for feats, digest in panels:
                if weights is None:
                    seen = req.family.perceive(feats, digest, req.rng, req.temperature)
                    utilities.append(req.family.holistic_z(seen))
                else:
                    seen = _perceived(
                        req.family, feats, digest, sorted(weights), req.rng, req.temperature
                    )
                    total = sum(weights.values())
                    reading = sum(w * seen[k] for k, w in weights.items()) / total
                    utilities.append(FOCUS * reading)
        u = np.asarray(utilities, dtype=float)
        u[-1] += LAST_PULL * req.family.position_bias
        slot = req.family.pick(u, req.rng, req.temperature, bias_scale=0.0)
        return slot, n, criterion

    def answer(self, req: SimRequest) -> str:
        slot, _, criterion = self._choose(req)
        letter = LETTERS[slot]
        verbosity = _VERBOSITY.get(req.family.name, 0.3)
        roll = float(req.rng.random())
        if roll < 0.08:
            return letter
        if roll < 0.08 + verbosity * 0.5:
            return f"({letter}) - it shows the better {criterion}."
        if roll < 0.08 + verbosity:
            return f"Looking at {criterion}, panel ({letter}) does best. Answer: ({letter})"
        return f"({letter})"

    def malformed(self, req: SimRequest) -> str:
        parsed = _question(req)
        criterion, n = parsed if parsed else ("quality", 2)
        n = n or max(2, len(req.images))
        if req.rng.random() < 0.5:
            return (
                f"The panels are very close in {criterion}; I cannot single one out "
                "with confidence."
            )
        return f"({chr(ord('A') + n)})"
