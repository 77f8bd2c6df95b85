"""A small procedural renderer: what is depicted (`Scene`) and how it was captured (`Execution`).

The synthetic datasets need pictures whose qualities show in the pixels, because the
simulated judges see nothing else. A `Scene` fixes the content (a landscape with a tree, a
vase on a table, a figure, a patterned motif, a building), its geometry and its palette. An
`Execution` says how the picture was made, in natural units: defocus blur in pixels, sensor
noise in 8-bit levels, JPEG quality, exposure in stops, and so on. The defaults of
`Execution` give a clean, well-made picture; every knob moves the pixels in a measurable way.

Only numpy and Pillow are used, and a 384x288 picture takes a few tens of milliseconds.
Rendering is deterministic: the same scene and execution always give the same pixels, on
every machine. Every sine, power and exponential comes from `judgepanel_sim.portable`,
never from numpy's CPU-dependent kernels or the C library, because a last-bit difference
in a float that lands on a rounding boundary moves an 8-bit pixel and so a JPEG block.
"""

from __future__ import annotations

import colorsys
import io
import math
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np
from PIL import Image, ImageEnhance, ImageFilter

from judgepanel_sim import portable as P

CONTENTS: tuple[str, ...] = ("landscape", "still_life", "figure", "pattern", "architecture")
"""Content categories a `Scene` can depict."""

DEFAULT_SIZE: tuple[int, int] = (384, 288)

# A Gaussian this narrow moves less than a thousandth of a pixel's light to its neighbours,
# so it is skipped: the pixels would not change.
_MIN_BLUR = 0.25

# Direction the key light comes from (upper left, toward the viewer), normalised.
_LIGHT = np.array([-0.45, -0.55, 0.70], dtype=np.float32)
_LIGHT /= np.float32(math.sqrt(P.sum_in_order(float(v) * float(v) for v in _LIGHT)))


@dataclass(frozen=True)
class Scene:
    """What a picture depicts.

    Attributes:
        content: one of `CONTENTS`.
        seed: drives geometry, palette, textures, clutter placement and sensor noise.
        hue: base hue in [0, 1); None derives it from ``seed``.
        harmony: 1 gives an analogous palette (hues close to the base hue), 0 a clashing
            one (unrelated hues).
        detail: surface texture on the subject, 0 (plain) to 1 (strongly patterned).
        oddity: how unusual the subject is, 0 (typical form and colour) to 1 (irregular
            silhouette and an unexpected hue).
    """

    content: str = "landscape"
    seed: int = 0
    hue: float | None = None
    harmony: float = 1.0
    detail: float = 0.0
    oddity: float = 0.0

    def __post_init__(self) -> None:
        if self.content not in CONTENTS:
            raise ValueError(f"Scene.content {self.content!r} is not one of {CONTENTS}")
        for name in ("harmony", "detail", "oddity"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"Scene.{name} must lie in [0, 1], got {value}")
        if self.hue is not None and not 0.0 <= self.hue <= 1.0:
            raise ValueError(f"Scene.hue must lie in [0, 1], got {self.hue}")


@dataclass(frozen=True)
class Execution:
    """How a picture was captured and processed; the defaults make a clean, well-made image.

    Attributes:
        blur_sigma: defocus blur, Gaussian standard deviation in pixels (0 = sharp).
        noise_sd: sensor noise, standard deviation in 8-bit levels (0 = none).
        jpeg_quality: JPEG quality of the final encode, 1-100 (100 = no round trip).
        exposure: exposure error in stops (+1 doubles the light; highlights clip).
        contrast: tone contrast multiplier around mid-grey (1 = as rendered).
        saturation: colourfulness multiplier (0 = grey, 1 = as rendered).
        cast_warmth: white-balance error, -1 (blue) to +1 (amber), as channel gains.
        cast_tint: white-balance error, -1 (magenta) to +1 (green).
        subject_x: horizontal centre of the subject as a fraction of the frame width.
        subject_y: vertical centre of the subject as a fraction of the frame height.
        subject_scale: subject height as a fraction of the frame height (0 = no subject).
        tilt_deg: camera roll in degrees; tilts the horizon and the subject.
        clutter: number of distracting small objects scattered over the frame.
        vignette: darkening toward the corners, 0 (none) to 1 (black corners).
        light_warmth: colour of the key light, -1 (cold, blue) to +1 (golden).
    """

    blur_sigma: float = 0.0
    noise_sd: float = 0.0
    jpeg_quality: int = 95
    exposure: float = 0.0
    contrast: float = 1.0
    saturation: float = 1.0
    cast_warmth: float = 0.0
    cast_tint: float = 0.0
    subject_x: float = 1.0 / 3.0
    subject_y: float = 0.55
    subject_scale: float = 0.45
    tilt_deg: float = 0.0
    clutter: int = 0
    vignette: float = 0.0
    light_warmth: float = 0.0

    def __post_init__(self) -> None:
        checks = {
            "blur_sigma": (0.0, 50.0),
            "noise_sd": (0.0, 128.0),
            "jpeg_quality": (1, 100),
            "exposure": (-8.0, 8.0),
            "contrast": (0.0, 5.0),
            "saturation": (0.0, 5.0),
            "cast_warmth": (-1.0, 1.0),
            "cast_tint": (-1.0, 1.0),
            "subject_x": (-0.5, 1.5),
            "subject_y": (-0.5, 1.5),
            "subject_scale": (0.0, 2.0),
            "tilt_deg": (-90.0, 90.0),
            "clutter": (0, 200),
            "vignette": (0.0, 1.0),
            "light_warmth": (-1.0, 1.0),
        }
        for name, (lo, hi) in checks.items():
            value = getattr(self, name)
            if not lo <= value <= hi:
                raise ValueError(f"Execution.{name} must lie in [{lo}, {hi}], got {value}")


def to_jpeg(img: Image.Image, quality: int = 95) -> bytes:
    """Encode ``img`` as baseline JPEG bytes (4:2:0, no metadata), deterministically."""
    buf = io.BytesIO()
    img.convert("RGB").save(buf, format="JPEG", quality=int(quality), optimize=False)
    return buf.getvalue()


def render(
    scene: Scene, execution: Execution | None = None, size: tuple[int, int] = DEFAULT_SIZE
) -> Image.Image:
    """Render ``scene`` as captured by ``execution`` into an RGB image of ``size`` (W, H).

    The steps follow a camera: the scene is drawn with its light, the lens adds vignetting
    and defocus, the exposure scales the light (and clips), the white balance, contrast and
    saturation are applied, the sensor adds noise, and the result is JPEG-compressed.
    """
    ex = execution or Execution()
    width, height = int(size[0]), int(size[1])
    if min(width, height) < 16:
        raise ValueError(f"render size must be at least 16 px on each side, got {size}")
    planes = _drawn(scene, _drawing_part(ex), width, height).copy()
    if ex.vignette > 0:
        planes *= _vignette(width, height, ex.vignette)
    img = Image.fromarray(_to_uint8(planes), "RGB")
    if ex.blur_sigma >= _MIN_BLUR:
        img = img.filter(ImageFilter.GaussianBlur(radius=float(ex.blur_sigma)))
    img = img.point(_tone_lut(ex.exposure, ex.cast_warmth, ex.cast_tint, ex.contrast))
    if ex.saturation != 1.0:
        img = ImageEnhance.Color(img).enhance(float(ex.saturation))
    if ex.noise_sd > 0:
        noise = _sensor_noise(scene.seed, width, height)
        arr = np.asarray(img, dtype=np.float32) + noise * np.float32(ex.noise_sd)
        img = Image.fromarray(np.clip(arr + 0.5, 0, 255).astype(np.uint8), "RGB")
    if ex.jpeg_quality < 100:
        img = Image.open(io.BytesIO(to_jpeg(img, ex.jpeg_quality))).convert("RGB")
    return img


_AFTER_DRAWING: dict[str, object] = {
    "blur_sigma": 0.0,
    "noise_sd": 0.0,
    "jpeg_quality": 95,
    "exposure": 0.0,
    "contrast": 1.0,
    "saturation": 1.0,
    "cast_warmth": 0.0,
    "cast_tint": 0.0,
    "vignette": 0.0,
}
"""The `Execution` fields that act on the drawn planes (lens, exposure, white balance,
sensor, encoding), at their defaults; the others decide what is drawn."""


def _drawing_part(ex: Execution) -> Execution:
    """``ex`` with every field that acts after drawing at its default: the key of a drawing."""
    return replace(ex, **_AFTER_DRAWING)


@lru_cache(maxsize=8)
def _drawn(scene: Scene, ex: Execution, width: int, height: int) -> np.ndarray:
    """The drawn planes of a scene, kept for the next picture of the same drawing.

    Pictures of one subject that differ only in how they were captured (a VisionQ row's
    methods, a VAB set's variants with the same framing) share their drawing: it is made
    once. Read-only; :func:`render` works on a copy.
    """
    planes = _draw_scene(scene, ex, width, height)
    planes.setflags(write=False)
    return planes


# --- drawing -------------------------------------------------------------------------------
# The canvas is channel-first (3, H, W) float32 in [0, 1]: numpy broadcasts a colour over
# whole planes far faster than over a trailing axis of length 3. Shapes are drawn only
# inside a window around them, so small objects cost little.


@lru_cache(maxsize=8)
def _grid(width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float32)
    xs.setflags(write=False)
    ys.setflags(write=False)
    return xs, ys


def _hsv(h: float, s: float, v: float) -> np.ndarray:
    """A colour as a (3, 1, 1) array, ready to broadcast over planes."""
    rgb = colorsys.hsv_to_rgb(h % 1.0, min(max(s, 0.0), 1.0), min(max(v, 0.0), 1.0))
    return np.array(rgb, dtype=np.float32).reshape(3, 1, 1)


def _coverage(dist_px: np.ndarray) -> np.ndarray:
    """Anti-aliased coverage from a signed distance in pixels (negative = inside)."""
    return np.clip(np.float32(0.5) - dist_px, 0.0, 1.0)


def _over(canvas: np.ndarray, alpha: np.ndarray, colour: np.ndarray) -> None:
    """Composite ``colour`` ((3, h, w) or (3, 1, 1)) over ``canvas`` in place."""
    step = colour - canvas
    step *= alpha
    canvas += step


def _window(cx: float, cy: float, radius: float, width: int, height: int):
    """Slices of the frame covering a disc, or None when the disc misses the frame."""
    x0, x1 = max(0, int(cx - radius) - 1), min(width, int(cx + radius) + 2)
    y0, y1 = max(0, int(cy - radius) - 1), min(height, int(cy + radius) + 2)
    if x0 >= x1 or y0 >= y1:
        return None
    return slice(y0, y1), slice(x0, x1)


_NOISE_TILE = (768, 1024)


@lru_cache(maxsize=1)
def _noise_tile() -> np.ndarray:
    """A fixed tile of unit Gaussian noise, drawn once per process from a constant seed."""
    # Drawn in float64 and rounded: numpy's float32 normal sampler decides rare draws with
    # the C library's single-precision exp, which differs between C libraries.
    tile = np.random.default_rng(0x5EED).standard_normal((*_NOISE_TILE, 3)).astype(np.float32)
    tile.setflags(write=False)
    return tile


def _sensor_noise(seed: int, width: int, height: int) -> np.ndarray:
    """Unit Gaussian noise (H, W, 3) for a scene: a seed-chosen window of the fixed tile.

    Cutting a window from one tile is far cheaper than drawing fresh samples per picture,
    and is just as deterministic; pictures larger than the tile draw their own.
    """
    rng = np.random.default_rng([seed, 1])
    th, tw = _NOISE_TILE
    if height > th or width > tw:
        return rng.standard_normal((height, width, 3)).astype(np.float32)
    oy, ox = int(rng.integers(0, th - height + 1)), int(rng.integers(0, tw - width + 1))
    return _noise_tile()[oy : oy + height, ox : ox + width]


def _value_noise(rng: np.random.Generator, width: int, height: int, cells: int) -> np.ndarray:
    """Smooth noise in [-1, 1]: a coarse random grid resized bilinearly to the frame."""
    gw = max(2, cells)
    gh = max(2, round(cells * height / width))
    coarse = rng.random((gh, gw), dtype=np.float32) * 2.0 - 1.0
    img = Image.fromarray(coarse, "F").resize((width, height), Image.Resampling.BILINEAR)
    return np.asarray(img, dtype=np.float32)


@lru_cache(maxsize=8)
def _vignette_falloff(width: int, height: int) -> np.ndarray:
    """How the vignette darkens each pixel at full strength; depends on the size only."""
    xs, ys = _grid(width, height)
    r2 = ((xs - width / 2) / (width / 2)) ** 2 + ((ys - height / 2) / (height / 2)) ** 2
    falloff = P.power(np.clip(r2 / 2.0, 0.0, 1.0), 1.2)
    falloff.setflags(write=False)
    return falloff


def _vignette(width: int, height: int, strength: float) -> np.ndarray:
    return 1.0 - np.float32(strength) * _vignette_falloff(width, height)


def _to_uint8(planes: np.ndarray) -> np.ndarray:
    """(3, H, W) floats in [0, 1] to an (H, W, 3) uint8 array."""
    out = np.clip(planes, 0.0, 1.0, out=planes)
    out *= np.float32(255.0)
    out += np.float32(0.5)
    return np.ascontiguousarray(out.astype(np.uint8).transpose(1, 2, 0))


def _tone_lut(exposure: float, warmth: float, tint: float, contrast: float) -> list[int]:
    """One 768-entry table: exposure in linear light, white-balance gains, then contrast."""
    x = np.arange(256, dtype=np.float64) / 255.0
    gains = (
        1.0 + 0.30 * warmth - 0.10 * tint,
        1.0 + 0.15 * tint,
        1.0 - 0.30 * warmth - 0.10 * tint,
    )
    table: list[int] = []
    for gain in gains:
        lin = P.power(x, 2.2) * P.pow_scalar(2.0, exposure) * gain
        y = P.power(np.clip(lin, 0.0, 1.0), 1 / 2.2)
        y = (y - 0.5) * contrast + 0.5
        table.extend(np.clip(np.round(y * 255.0), 0, 255).astype(int).tolist())
    return table


@dataclass(frozen=True)
class _Palette:
    sky_top: np.ndarray
    sky_low: np.ndarray
    ground: np.ndarray
    far: np.ndarray
    subject: np.ndarray
    accent: np.ndarray
    light: np.ndarray


def _palette(scene: Scene, rng: np.random.Generator, warmth: float) -> _Palette:
    base = scene.hue if scene.hue is not None else float(rng.random())
    # Analogous offsets for a harmonious palette; unrelated offsets for a clashing one.
    close = rng.uniform(-0.07, 0.07, 5)
    wild = rng.uniform(0.2, 0.8, 5)
    offs = scene.harmony * close + (1.0 - scene.harmony) * wild
    hues = [(base + o) % 1.0 for o in offs]
    odd_hue = (hues[3] + 0.5 * scene.oddity) % 1.0
    light = np.array([1 + 0.30 * warmth, 1 + 0.06 * warmth, 1 - 0.30 * warmth], "f4")
    sky_low = _hsv(hues[0], 0.20, 0.97)
    golden = np.array([1.0, 0.70, 0.42], "f4").reshape(3, 1, 1)
    cold = np.array([0.62, 0.72, 0.95], "f4").reshape(3, 1, 1)
    if warmth > 0:
        sky_low = (1 - 0.5 * warmth) * sky_low + 0.5 * warmth * golden
    elif warmth < 0:
        sky_low = (1 + 0.5 * warmth) * sky_low - 0.5 * warmth * cold
    return _Palette(
        sky_top=_hsv(hues[0], 0.45, 0.85),
        sky_low=sky_low.astype(np.float32),
        ground=_hsv(hues[1], 0.50, 0.55),
        far=_hsv(hues[2], 0.30, 0.70),
        subject=_hsv(odd_hue, 0.70 + 0.2 * scene.oddity, 0.80),
        accent=_hsv(hues[4], 0.60, 0.45),
        light=light.reshape(3, 1, 1),
    )


@dataclass(frozen=True)
class _Frame:
    """Per-picture drawing context: rotated scene coordinates and shared noise fields."""

    width: int
    height: int
    u: np.ndarray  # scene x (frame x rotated by the camera roll), pixels
    v: np.ndarray  # scene y, pixels
    horizon: float
    fine: np.ndarray
    coarse: np.ndarray


@dataclass(frozen=True)
class _Backdrop:
    """A scene's palette, frame and background under one light and camera roll, and its
    generator's state after them (the subject's drawing continues from there)."""

    canvas: np.ndarray
    frame: _Frame
    palette: _Palette
    state: dict


@lru_cache(maxsize=4)
def _backdrop(scene: Scene, warmth: float, tilt_deg: float, width: int, height: int) -> _Backdrop:
    """Palette, noise fields and background of a scene: what every picture of it shares.

    A VAB set's variants and a VisionQ row's methods show one scene under different
    framings and captures; those with the same light and camera roll share this stage,
    so it is drawn once. Every array is read-only.
    """
    rng = np.random.default_rng([scene.seed, 0])
    pal = _palette(scene, rng, warmth)
    xs, ys = _grid(width, height)
    # Camera roll: scene coordinates are the frame coordinates rotated about the centre.
    t = math.radians(tilt_deg)
    c, s = np.float32(P.cos_scalar(t)), np.float32(P.sin_scalar(t))
    cx0, cy0 = width / 2.0, height / 2.0
    fr = _Frame(
        width=width,
        height=height,
        u=c * (xs - cx0) + s * (ys - cy0) + cx0,
        v=-s * (xs - cx0) + c * (ys - cy0) + cy0,
        horizon=height * float(rng.uniform(0.55, 0.68)),
        fine=_value_noise(rng, width, height, 48),
        coarse=_value_noise(rng, width, height, 7),
    )
    canvas = _BACKGROUNDS[scene.content](fr, pal, rng)
    for arr in (canvas, fr.u, fr.v, fr.fine, fr.coarse):
        arr.setflags(write=False)
    return _Backdrop(canvas, fr, pal, rng.bit_generator.state)


def _draw_scene(scene: Scene, ex: Execution, width: int, height: int) -> np.ndarray:
    back = _backdrop(scene, ex.light_warmth, ex.tilt_deg, width, height)
    canvas, fr, pal = back.canvas.copy(), back.frame, back.palette
    rng = np.random.Generator(np.random.PCG64())
    rng.bit_generator.state = back.state
    xs, ys = _grid(width, height)
    _draw_clutter(canvas, scene, ex.clutter, xs, ys, width, height)
    if ex.subject_scale > 0:
        t = math.radians(ex.tilt_deg)
        c, s = np.float32(P.cos_scalar(t)), np.float32(P.sin_scalar(t))
        size = ex.subject_scale * height
        sx, sy = ex.subject_x * width, ex.subject_y * height
        win = _window(sx, sy, 0.8 * size + 2.0, width, height)
        if win is not None:
            wx, wy = xs[win], ys[win]
            # Subject-local coordinates, rotated with the camera.
            lx = c * (wx - sx) + s * (wy - sy)
            ly = -s * (wx - sx) + c * (wy - sy)
            view = canvas[:, win[0], win[1]]
            _SUBJECTS[scene.content](view, lx, ly, size, scene, pal, rng, fr.fine[win])
    return canvas


def _sky_ground(fr: _Frame, pal: _Palette) -> np.ndarray:
    v, horizon = fr.v, fr.horizon
    frac = np.clip(v / max(horizon, 1.0), 0.0, 1.0)
    sky = pal.sky_top + frac * (pal.sky_low - pal.sky_top)
    sky *= 1.0 + np.float32(0.05) * fr.coarse
    depth = np.clip((v - horizon) / max(float(v.max()) - horizon, 1.0), 0.0, 1.0)
    shade = (0.85 + 0.3 * depth) * (1.0 + np.float32(0.10) * fr.fine)
    ground = (pal.ground * (pal.light * 0.9 + 0.1)) * shade
    _over(sky, _coverage(horizon - v), ground)
    return sky


def _bg_landscape(fr: _Frame, pal: _Palette, rng: np.random.Generator) -> np.ndarray:
    canvas = _sky_ground(fr, pal)
    f1, f2 = rng.uniform(1.5, 3.5, 2) * 2 * math.pi / fr.width
    p1, p2 = rng.uniform(0, 2 * math.pi, 2)
    u = fr.u
    swell = 0.08 + 0.05 * P.sin(u * np.float32(f1) + np.float32(p1))
    swell += 0.03 * P.sin(u * np.float32(f2) + np.float32(p2))
    ridge = fr.horizon - fr.height * swell
    hills = (pal.far * pal.light) * (0.9 + 0.1 * fr.coarse)
    _over(canvas, _coverage(ridge - fr.v) * _coverage(fr.v - fr.horizon - 1), hills)
    return canvas


def _bg_still_life(fr: _Frame, pal: _Palette, rng: np.random.Generator) -> np.ndarray:
    canvas = (pal.sky_low * 0.85) * (0.92 + 0.08 * (fr.u / fr.width))
    table = (pal.ground * pal.light) * (1.0 + np.float32(0.06) * fr.fine)
    _over(canvas, _coverage(fr.horizon - fr.v), table)
    edge = np.abs(fr.v - fr.horizon - 3.0) - 1.5
    _over(canvas, _coverage(edge), pal.ground * 0.6)
    return canvas


def _bg_figure(fr: _Frame, pal: _Palette, rng: np.random.Generator) -> np.ndarray:
    canvas = _sky_ground(fr, pal)
    path = np.abs(fr.u - fr.width * 0.5) - (fr.v - fr.horizon) * 0.6 - 4.0
    _over(canvas, _coverage(path) * _coverage(fr.horizon - fr.v), pal.far * pal.light)
    return canvas


def _bg_pattern(fr: _Frame, pal: _Palette, rng: np.random.Generator) -> np.ndarray:
    period = float(rng.uniform(18, 34))
    angle = float(rng.uniform(0, math.pi))
    ca = np.float32(P.cos_scalar(angle) / period)
    sa = np.float32(P.sin_scalar(angle) / period)
    phase = fr.u * ca + fr.v * sa
    stripe = (P.sin(np.float32(2 * math.pi) * phase) > 0).astype(np.float32)
    canvas = pal.sky_low * 0.9 + stripe * (pal.far - pal.sky_low * 0.9)
    canvas *= 1.0 + np.float32(0.04) * fr.fine
    return canvas


def _bg_architecture(fr: _Frame, pal: _Palette, rng: np.random.Generator) -> np.ndarray:
    canvas = _sky_ground(fr, pal)
    width, height = fr.width, fr.height
    x = float(rng.uniform(-0.1, 0.1)) * width
    while x < width * 1.1:
        w = float(rng.uniform(0.08, 0.18)) * width
        h = float(rng.uniform(0.08, 0.25)) * height
        box = np.maximum(
            np.abs(fr.u - x - w / 2) - w / 2, np.abs(fr.v - fr.horizon + h / 2) - h / 2
        )
        _over(canvas, _coverage(box), pal.far * (float(rng.uniform(0.8, 1.0)) * pal.light))
        x += w * float(rng.uniform(0.9, 1.3))
    return canvas


_BACKGROUNDS = {
    "landscape": _bg_landscape,
    "still_life": _bg_still_life,
    "figure": _bg_figure,
    "pattern": _bg_pattern,
    "architecture": _bg_architecture,
}


def _draw_clutter(canvas, scene: Scene, n: int, xs, ys, width: int, height: int) -> None:
    """Small distracting objects in unrelated colours, placed from the scene's own seed."""
    if n <= 0:
        return
    rng = np.random.default_rng([scene.seed, 2])
    for _ in range(n):
        cx, cy = rng.uniform(0.04, 0.96) * width, rng.uniform(0.08, 0.96) * height
        r = rng.uniform(0.025, 0.06) * height
        colour = _hsv(float(rng.random()), 0.65, float(rng.uniform(0.45, 0.95)))
        round_shape = rng.random() < 0.5
        win = _window(cx, cy, r + 2.0, width, height)
        if win is None:
            continue
        dx, dy = xs[win] - cx, ys[win] - cy
        if round_shape:
            dist = np.sqrt(dx * dx + dy * dy) - r
        else:
            dist = np.maximum(np.abs(dx) - r, np.abs(dy) - 0.7 * r)
        shade = 1.0 - 0.25 * np.clip(dy / (2 * r) + 0.5, 0, 1)
        _over(canvas[:, win[0], win[1]], _coverage(dist), colour * shade)


def _angular(lx: np.ndarray, ly: np.ndarray, top: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """cos(k theta) and sin(k theta) of each point for k = 0..top, without an arctan2.

    The angle addition recurrence uses real multiplies and adds only: complex arithmetic
    may be fused into multiply-adds on one CPU and not on another.
    """
    r = np.sqrt(lx * lx + ly * ly) + np.float32(1e-6)
    c, s = lx / r, ly / r
    out = [(np.ones_like(c), np.zeros_like(s)), (c, s)]
    for _ in range(2, top + 1):
        ck, sk = out[-1]
        out.append((ck * c - sk * s, sk * c + ck * s))
    return out


def _wobble(lx, ly, amount: float, rng: np.random.Generator) -> np.ndarray:
    """Radial multiplier of a silhouette: 1 for a regular form, irregular as ``amount`` grows.

    The sum of sin(k theta + phase) = sin(k theta) cos(phase) + cos(k theta) sin(phase).
    """
    ks = rng.integers(3, 8, 3)
    ph = rng.uniform(0, 2 * math.pi, 3)
    if amount <= 0:
        return np.ones_like(lx)
    turns = _angular(lx, ly, int(ks.max()))
    total = np.zeros(lx.shape, dtype=np.float32)
    for k, p in zip(ks, ph, strict=True):
        ck, sk = turns[int(k)]
        total += sk * np.float32(P.cos_scalar(p)) + ck * np.float32(P.sin_scalar(p))
    return 1.0 + np.float32(0.30 * amount / 3.0) * total


def _shaded_blob(lx, ly, rx, ry, amount, rng, pal, colour, texture):
    """Coverage and shaded colour of an ellipsoid whose outline may be irregular."""
    ex, ey = lx / np.float32(rx), ly / np.float32(ry)
    radius = _wobble(ex, ey, amount, rng)
    rn = np.sqrt(ex * ex + ey * ey) / radius
    alpha = _coverage((rn - 1.0) * np.float32(min(rx, ry)))
    nz = np.sqrt(np.clip(1.0 - rn * rn, 0.0, 1.0))
    nx, ny = ex / radius, ey / radius
    diffuse = np.clip(nx * _LIGHT[0] + ny * _LIGHT[1] + nz * _LIGHT[2], 0.0, 1.0)
    shade = 0.30 + (0.85 * pal.light) * diffuse
    return alpha, colour * shade * texture


def _texture(lx, ly, size, scene: Scene, rng, fine) -> np.ndarray:
    """Surface pattern of the subject: stripes or a grid whose contrast grows with detail."""
    freq = float(rng.uniform(5.0, 12.0)) * 2 * math.pi / size
    ang = float(rng.uniform(0, math.pi))
    grid = rng.random() < 0.5
    if scene.detail <= 0:
        return np.ones_like(lx)
    ca, sa = np.float32(P.cos_scalar(ang) * freq), np.float32(P.sin_scalar(ang) * freq)
    pat = P.sin(lx * ca + ly * sa)
    if grid:
        pat *= P.sin(ly * ca - lx * sa)
    return 1.0 + np.float32(scene.detail) * (0.35 * pat + 0.15 * fine)


def _box(lx, ly, cx, cy, hw, hh) -> np.ndarray:
    return np.maximum(np.abs(lx - np.float32(cx)) - hw, np.abs(ly - np.float32(cy)) - hh)


def _subj_landscape(canvas, lx, ly, size, scene, pal, rng, fine) -> None:
    """A tree: a trunk and a shaded canopy."""
    tex = _texture(lx, ly, size, scene, rng, fine)
    trunk = _box(lx, ly, 0.0, 0.25 * size, 0.05 * size, 0.25 * size)
    bark = 0.8 + 0.2 * np.clip(-lx / np.float32(size / 8), -1, 1)
    _over(canvas, _coverage(trunk), pal.accent * bark)
    canopy_y = ly + np.float32(0.15 * size)
    alpha, col = _shaded_blob(
        lx, canopy_y, 0.30 * size, 0.33 * size, scene.oddity, rng, pal, pal.subject, tex
    )
    _over(canvas, alpha, col)


def _subj_still_life(canvas, lx, ly, size, scene, pal, rng, fine) -> None:
    """A vase on the table with a piece of fruit beside it."""
    tex = _texture(lx, ly, size, scene, rng, fine)
    t = np.clip(ly / np.float32(size) + 0.5, 0.0, 1.0)
    neck = float(rng.uniform(0.06, 0.10))
    belly = float(rng.uniform(0.18, 0.26))
    bulge = np.clip(P.sin(np.float32(math.pi) * t), 0.0, 1.0)
    bulge = bulge * np.sqrt(bulge)  # ** 1.5
    half = np.float32(size) * (neck + belly * bulge) * _wobble(lx, ly, scene.oddity, rng)
    alpha = _coverage(np.maximum(np.abs(lx) - half, np.abs(ly) - 0.5 * size))
    nx = np.clip(lx / np.maximum(half, 1.0), -1.0, 1.0)
    nz = np.sqrt(1.0 - nx * nx)
    diffuse = np.clip(nx * _LIGHT[0] + nz * _LIGHT[2] - 0.2 * (t - 0.5), 0.0, 1.0)
    col = pal.subject * (0.30 + (0.85 * pal.light) * diffuse) * tex
    fx, fy = lx - np.float32(0.42 * size), ly - np.float32(0.38 * size)
    ones = np.ones_like(fx)
    a2, c2 = _shaded_blob(fx, fy, 0.12 * size, 0.12 * size, 0.0, rng, pal, pal.accent * 1.6, ones)
    _over(canvas, a2, c2)
    _over(canvas, alpha, col)


def _subj_figure(canvas, lx, ly, size, scene, pal, rng, fine) -> None:
    """A standing figure: legs, a torso and a head."""
    tex = _texture(lx, ly, size, scene, rng, fine)
    for side in (-1.0, 1.0):
        leg = _box(lx, ly, side * 0.07 * size, 0.32 * size, 0.045 * size, 0.18 * size)
        _over(canvas, _coverage(leg), pal.accent * pal.light)
    torso_y = ly + np.float32(0.02 * size)
    a, col = _shaded_blob(
        lx, torso_y, 0.17 * size, 0.27 * size, scene.oddity, rng, pal, pal.subject, tex
    )
    _over(canvas, a, col)
    skin = _hsv(0.07, 0.40, 0.88)
    head_y = ly + np.float32(0.39 * size)
    ones = np.ones_like(lx)
    a, col = _shaded_blob(lx, head_y, 0.10 * size, 0.11 * size, 0.0, rng, pal, skin, ones)
    _over(canvas, a, col)


def _subj_pattern(canvas, lx, ly, size, scene, pal, rng, fine) -> None:
    """A ringed disc motif."""
    tex = _texture(lx, ly, size, scene, rng, fine)
    r = np.sqrt(lx * lx + ly * ly) / np.float32(size)
    rings = 1.0 + 0.25 * np.sign(P.sin(r * np.float32(6 * math.pi)))
    a, col = _shaded_blob(
        lx, ly, 0.48 * size, 0.48 * size, scene.oddity, rng, pal, pal.subject, tex * rings
    )
    _over(canvas, a, col)


def _subj_architecture(canvas, lx, ly, size, scene, pal, rng, fine) -> None:
    """A tower with a pitched roof and a grid of windows."""
    tex = _texture(lx, ly, size, scene, rng, fine)
    hw = np.float32(0.22 * size)
    wob = _wobble(lx, ly, scene.oddity, rng)
    body = np.maximum(np.abs(lx) - hw * wob, np.abs(ly - np.float32(0.1 * size)) - 0.4 * size)
    roof_h = np.float32(0.2 * size)
    roof_y = ly + np.float32(0.3 * size)  # 0 at the roof's base, negative upward
    roof = np.maximum(
        np.abs(lx) - (hw * 1.15) * (1.0 + roof_y / roof_h), np.abs(roof_y + roof_h / 2) - roof_h / 2
    )
    side = np.where(lx < 0, np.float32(1.0), np.float32(0.72))
    _over(canvas, _coverage(body), (pal.subject * pal.light) * (side * tex))
    _over(canvas, _coverage(roof), pal.accent * pal.light)
    cell = np.float32(0.11 * size)
    wx = np.abs(np.mod(lx + hw, cell) - cell / 2) - cell * 0.22
    wy = np.abs(np.mod(ly + np.float32(0.3 * size), cell * 1.3) - cell * 0.65) - cell * 0.3
    window = np.maximum(np.maximum(wx, wy), body + cell * 0.35)
    _over(canvas, _coverage(window), pal.sky_top * 0.45)


_SUBJECTS = {
    "landscape": _subj_landscape,
    "still_life": _subj_still_life,
    "figure": _subj_figure,
    "pattern": _subj_pattern,
    "architecture": _subj_architecture,
}
