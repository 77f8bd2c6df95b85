"""Generic pixel features: what a perception model could pick up from any RGB image.

The simulated judges see an image only through these numbers. They are image-agnostic
(no knowledge of how a picture was made), computed with vectorised numpy and scipy, and
valid on real photographs, synthetic pictures and small crops alike (from 32 px a side).
A 384x288 picture takes ten to twenty milliseconds; the server computes it once per image.

Large images are first reduced by block averaging to at most ``WORK_SIDE`` pixels on the
long side, as a vision encoder would resize them; JPEG blockiness is measured before that
reduction, because the 8x8 grid only exists at the native resolution.

Feature names, units and directions (see ``FEATURES``) are part of the interface that the
families and handlers read; add features freely, rename none.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import ndimage

from judgepanel_sim import portable as P

WORK_SIDE = 768
"""Long side (px) of the working image; bigger inputs are block-averaged down to it."""

MIN_SIDE = 32
"""Smallest side (px) the features are defined for."""

FEATURES: dict[str, str] = {
    "sharpness": "log10 variance of the luminance Laplacian (8-bit units); higher = crisper",
    "edge_width": "apparent width of strong edges in px (about 2.5 x blur sigma); lower = crisper",
    "detail": "log10 mid-band (sigma 2) texture energy; higher = more fine detail",
    "noise": "noise sigma in 8-bit levels, measured in flat regions",
    "blockiness": "JPEG 8x8 grid strength: excess step at block borders (0 = none)",
    "brightness": "mean luminance, 0-1",
    "highlight_clip": "fraction of pixels with a channel at or above 252",
    "shadow_clip": "fraction of pixels with luminance at or below 5/255",
    "contrast": "standard deviation of luminance, 0-0.5",
    "tonal_range": "2nd to 98th percentile spread of luminance, 0-1",
    "colourfulness": "Hasler-Suesstrunk colourfulness M (8-bit units; 0 grey, >100 garish)",
    "saturation": "mean HSV saturation, 0-1",
    "colour_cast": "chroma of the brightest tenth of the image (white patch), 0-1",
    "warmth": "mean (R - B), -1 to 1; positive = warm",
    "tint": "mean (G - (R + B) / 2), -1 to 1; positive = green",
    "hue_spread": "circular spread of chroma-weighted hue, 0 (one hue) to 1 (all hues)",
    "hue_harmony": "share of chroma inside the best-fitting 90-degree harmony template, 0.25-1",
    "subject_x": "horizontal centre of the main salient region, 0 (left) to 1 (right)",
    "subject_y": "vertical centre of the main salient region, 0 (top) to 1 (bottom)",
    "subject_size": "area of the main salient region as a fraction of the frame",
    "thirds_distance": "distance from the subject centre to the nearest thirds point (frame units)",
    "thirds_x": "horizontal distance from the subject centre to the nearest vertical thirds line",
    "centre_distance": "distance from the subject centre to the frame centre (frame units)",
    "border_saliency": "share of saliency in the outer 6% band of the frame",
    "balance_lr": "saliency (right - left) / total, -1 to 1",
    "balance_tb": "saliency (bottom - top) / total, -1 to 1",
    "edge_density": "fraction of pixels on a clear edge after light smoothing",
    "blob_count": "number of separate salient regions",
    "tilt": "dominant line's deviation from level or plumb, degrees (-45, 45]; + = CCW",
    "line_strength": "how strongly one orientation dominates the edges, 0-1",
    "vignetting": "1 - corner / centre luminance (positive = darker corners)",
    "focus_contrast": "log10 ratio of fine detail on the subject vs the background",
}

_EPS = 1e-6
_LUMA = np.array([0.299, 0.587, 0.114], dtype=np.float32)


def _block_reduce(arr: np.ndarray, factor: int) -> np.ndarray:
    """Mean over ``factor`` x ``factor`` blocks of a 2-D array (trailing rows/columns dropped).

    Strided adds are an order of magnitude faster than a reshaped ``mean`` here.
    """
    if factor <= 1:
        return arr
    h = (arr.shape[0] // factor) * factor
    w = (arr.shape[1] // factor) * factor
    a = arr[:h, :w]
    cols = a[:, 0::factor].copy()
    for i in range(1, factor):
        cols += a[:, i::factor]
    out = cols[0::factor].copy()
    for i in range(1, factor):
        out += cols[i::factor]
    out *= np.float32(1.0 / (factor * factor))
    return out


def _blockiness(y255: np.ndarray) -> float:
    """Excess luminance step on the strongest 8-px phase, horizontally and vertically.

    Steps are clipped at 24 levels so that real edges do not dominate; the grid phase is
    searched so that crops of a JPEG (whose grid is shifted) are measured too.
    """
    out = []
    for axis in (1, 0):
        d = np.abs(np.diff(y255, axis=axis))
        np.minimum(d, 24.0, out=d)
        prof = d.mean(axis=1 - axis)
        n = (prof.shape[0] // 8) * 8
        if n < 16:
            continue
        phases = prof[:n].reshape(-1, 8).mean(axis=0)
        peak = float(phases.max())
        rest = float(np.median(phases))
        out.append((peak - rest) / (rest + 0.5))
    return float(np.mean(out)) if out else 0.0


def _hue_stats(
    r: np.ndarray, g: np.ndarray, b: np.ndarray, chroma: np.ndarray
) -> tuple[float, float]:
    """Spread and template harmony of the chroma-weighted hue distribution.

    Harmony is the share of chroma that falls inside the best of three templates of 90
    degrees of the hue wheel in total: analogous (one 90-degree arc), complementary (arcs
    of 60 and 30 degrees facing each other) and triadic (three 30-degree arcs).
    """
    a_opp = r - 0.5 * (g + b)
    b_opp = (math.sqrt(3.0) / 2.0) * (g - b)
    total = float(chroma.sum())
    if total < 0.02 * chroma.size:  # essentially grey: one "hue", trivially harmonious
        return 0.0, 1.0
    # Hexagonal chroma ~ |(a, b)|, so the chroma-weighted mean direction is the plain sum.
    spread = 1.0 - math.hypot(float(a_opp.sum()), float(b_opp.sum())) / (
        float(np.sqrt(a_opp * a_opp + b_opp * b_opp).sum()) + _EPS
    )
    sub = (slice(None, None, 2), slice(None, None, 2)) if chroma.size > 8192 else (slice(None),) * 2
    theta = P.arctan2(b_opp[sub], a_opp[sub])
    w = chroma[sub]
    bins = ((theta + math.pi) * (36 / (2 * math.pi))).astype(np.int64) % 36
    hist = np.bincount(bins.ravel(), weights=w.ravel(), minlength=36)
    hist = hist / (hist.sum() + _EPS)
    ext = np.concatenate([hist, hist[:9]])
    cs = np.concatenate([[0.0], np.cumsum(ext)])
    s3 = cs[3:39] - cs[0:36]
    s6 = cs[6:42] - cs[0:36]
    s9 = cs[9:45] - cs[0:36]
    analogous = s9.max()
    complementary = (s6 + np.roll(s3, -18)).max()
    triad = (s3 + np.roll(s3, -12) + np.roll(s3, -24)).max()
    harmony = float(max(analogous, complementary, triad))
    return float(min(max(spread, 0.0), 1.0)), min(harmony, 1.0)


def _saliency(
    r: np.ndarray, g: np.ndarray, b: np.ndarray, y: np.ndarray, abs_lap: np.ndarray
) -> dict[str, float]:
    """Placement, balance and clutter from a coarse saliency map.

    Saliency is centre-surround contrast (fine minus coarse blur) in luminance and two
    opponent colour channels, plus a little edge energy, on a grid of about 96 px. The
    main subject is the salient region with the largest mass, where regions stretched
    across the frame (horizons, bands) count for less than compact ones.
    """
    h, w = y.shape
    f = max(1, max(h, w) // 96)
    sy = _block_reduce(y, f)
    sr, sg, sb = (_block_reduce(c, f) for c in (r, g, b))
    sh, sw = sy.shape
    surround = max(2.0, 0.1 * max(sh, sw))
    dist2 = np.zeros_like(sy)
    for plane in (sy, (sr - sg) * 0.8, (0.5 * (sr + sg) - sb) * 0.6):
        centre_blur = ndimage.gaussian_filter(plane, 1.5, mode="nearest")
        dist2 += (
            centre_blur - ndimage.gaussian_filter(plane, surround, mode="nearest", truncate=2.0)
        ) ** 2
    dist = np.sqrt(dist2)
    gy, gx = np.gradient(ndimage.uniform_filter(sy, 2, mode="nearest"))
    edge = ndimage.uniform_filter(np.sqrt(gx * gx + gy * gy), 3, mode="nearest")
    sal = dist / (dist.mean() + _EPS) + 0.3 * edge / (edge.mean() + _EPS)
    sal = sal - _quantile(sal, 0.25)
    np.maximum(sal, 0.0, out=sal)
    total = float(sal.sum()) + _EPS

    yy = (np.arange(sh, dtype=np.float32) + 0.5) / sh
    xx = (np.arange(sw, dtype=np.float32) + 0.5) / sw
    col = sal.sum(axis=0)
    row = sal.sum(axis=1)
    balance_lr = float((col * np.sign(xx - 0.5)).sum() / total)
    balance_tb = float((row * np.sign(yy - 0.5)).sum() / total)

    band = max(1, round(0.06 * min(sh, sw)))
    inner = float(sal[band:-band, band:-band].sum()) if sh > 2 * band and sw > 2 * band else 0.0
    border = 1.0 - inner / total

    thr = float(sal.mean() + sal.std())
    mask = sal > thr
    labels, n = ndimage.label(mask)
    if n:
        idx = np.arange(1, n + 1)
        mass = ndimage.sum_labels(sal, labels, idx)
        weight = np.array(
            [
                0.2
                if (sl[1].stop - sl[1].start) > 0.75 * sw or (sl[0].stop - sl[0].start) > 0.9 * sh
                else 1.0
                for sl in ndimage.find_objects(labels)
            ]
        )
        main = int(idx[np.argmax(mass * weight)])
        keep = mass >= 0.02 * mass.sum()
        blobs = int(keep.sum())
        m = labels == main
        wm = (sal - thr) * m
        wsum = float(wm.sum()) + _EPS
        cx = float((wm.sum(axis=0) * xx).sum() / wsum)
        cy = float((wm.sum(axis=1) * yy).sum() / wsum)
        size = float(m.mean())
    else:
        m = np.zeros_like(mask)
        cx = float((col * xx).sum() / total)
        cy = float((row * yy).sum() / total)
        size, blobs = 0.0, 0
    thirds = min(math.hypot(cx - tx, cy - ty) for tx in (1 / 3, 2 / 3) for ty in (1 / 3, 2 / 3))
    thirds_x = min(abs(cx - 1 / 3), abs(cx - 2 / 3))
    centre = math.hypot(cx - 0.5, cy - 0.5)

    # Fine detail on the subject vs elsewhere (a sharp subject on a soft background).
    detail_grid = _block_reduce(abs_lap, f)
    dh, dw = min(sh, detail_grid.shape[0]), min(sw, detail_grid.shape[1])
    detail_grid, m = detail_grid[:dh, :dw], m[:dh, :dw]
    if m.any() and (~m).any():
        fc = P.log10_scalar(
            (float(detail_grid[m].mean()) + 1e-4) / (float(detail_grid[~m].mean()) + 1e-4)
        )
    else:
        fc = 0.0
    return {
        "subject_x": cx,
        "subject_y": cy,
        "subject_size": size,
        "thirds_distance": thirds,
        "thirds_x": thirds_x,
        "centre_distance": centre,
        "border_saliency": border,
        "balance_lr": balance_lr,
        "balance_tb": balance_tb,
        "blob_count": float(blobs),
        "focus_contrast": fc,
    }


def _tilt(gx: np.ndarray, gy: np.ndarray) -> tuple[float, float]:
    """Dominant edge orientation folded onto level/plumb, and how dominant it is.

    Gradients of the lightly blurred image (pixel-level gradients of anti-aliased edges
    are biased) vote with weight |g|^2 for the angle 4 theta, which folds level and plumb
    lines onto one direction; the mean vector gives the tilt (+-45 degrees, positive =
    rotated counter-clockwise) and its length the strength (0 = no dominant line).
    """
    m2 = gx * gx + gy * gy + 1e-12
    a = gx * gx - gy * gy
    b = 2.0 * gx * gy
    c = float(((a * a - b * b) / m2).sum())
    s = float((2.0 * a * b / m2).sum())
    total = float(m2.sum())
    if total < 1e-6:
        return 0.0, 0.0
    tilt = -math.degrees(P.atan2_scalar(s, c)) / 4.0
    return tilt, min(1.0, math.hypot(c, s) / total)


def _planes(arr: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Contiguous float32 R, G, B planes in 0-1."""
    if arr.dtype == np.uint8:
        scale = np.float32(1 / 255)
        return tuple(arr[..., c].astype(np.float32) * scale for c in range(3))  # type: ignore[return-value]
    return tuple(np.clip(arr[..., c].astype(np.float32), 0.0, 1.0) for c in range(3))  # type: ignore[return-value]


def _quantile(a: np.ndarray, q: float) -> float:
    """Approximate quantile from a strided subsample (exact enough for thresholds, 10x faster)."""
    flat = a[::2, ::2].ravel() if a.ndim == 2 and a.size > 4096 else a.ravel()
    k = min(flat.size - 1, max(0, int(q * (flat.size - 1))))
    return float(np.partition(flat, k)[k])


def features(rgb: np.ndarray) -> dict[str, float]:
    """Pixel features of one RGB image (H x W x 3, uint8 or float in 0-1).

    Args:
        rgb: the image; both sides must be at least ``MIN_SIDE`` px.

    Returns:
        A dict with every key of ``FEATURES``, all finite floats.
    """
    arr = np.asarray(rgb)
    if arr.ndim != 3 or arr.shape[2] < 3:
        raise ValueError(f"expected an H x W x 3 RGB array, got shape {arr.shape}")
    if min(arr.shape[:2]) < MIN_SIDE:
        raise ValueError(f"image {arr.shape[1]}x{arr.shape[0]} is smaller than {MIN_SIDE} px")
    r, g, b = _planes(arr)
    y = 0.299 * r + 0.587 * g + 0.114 * b
    y255 = y * 255.0
    blockiness = _blockiness(y255)

    factor = math.ceil(max(r.shape) / WORK_SIDE)
    if factor > 1:
        r, g, b, y = (_block_reduce(c, factor) for c in (r, g, b, y))
        y255 = y * 255.0

    # Sharpness: Laplacian variance, and edge width from how much a known extra blur
    # flattens the strongest edges. A step edge blurred by s has peak gradient
    # ~ 1 / sqrt(s^2 + v) after a further blur of variance v; comparing v = 2/3 (a 3x3 box,
    # which also tames noise) with v = 4 (Gaussian sigma 2) gives s.
    lap = (
        y255[:-2, 1:-1] + y255[2:, 1:-1] + y255[1:-1, :-2] + y255[1:-1, 2:] - 4.0 * y255[1:-1, 1:-1]
    )
    sharpness = P.log10_scalar(float(lap.var()) + 1e-3)
    y1 = ndimage.uniform_filter(y, 3, mode="nearest")
    gx1 = (y1[1:-1, 2:] - y1[1:-1, :-2]) * 0.5
    gy1 = (y1[2:, 1:-1] - y1[:-2, 1:-1]) * 0.5
    mag1 = np.sqrt(gx1 * gx1 + gy1 * gy1)
    yb = ndimage.gaussian_filter(y, 2.0, mode="nearest", truncate=2.5)
    gxb = (yb[1:-1, 2:] - yb[1:-1, :-2]) * 0.5
    gyb = (yb[2:, 1:-1] - yb[:-2, 1:-1]) * 0.5
    magb = np.sqrt(gxb * gxb + gyb * gyb)
    strong = magb >= max(_quantile(magb, 0.98), 1e-3)
    ratio = float(np.median(magb[strong] / (mag1[strong] + _EPS))) if strong.any() else 0.99
    ratio = min(max(ratio, 0.05), 0.99)
    var_edge = max(0.0, (4.0 * ratio * ratio - 2.0 / 3.0) / (1.0 - ratio * ratio))
    edge_width = 2.5 * math.sqrt(var_edge + 0.04)
    detail = P.log10_scalar(float(np.abs(y - yb).mean()) * 255.0 + 1e-3)

    # Noise: Immerkaer's operator (for white noise of sd s the response has mean
    # |r| = 6 s sqrt(2 / pi)), pooled over 8x8 blocks free of clipping; the 20th percentile
    # of the block estimates reads the flat areas, where texture cannot pose as noise.
    resp = np.abs(
        y255[:-2, :-2]
        + y255[:-2, 2:]
        + y255[2:, :-2]
        + y255[2:, 2:]
        - 2.0 * (y255[:-2, 1:-1] + y255[2:, 1:-1] + y255[1:-1, :-2] + y255[1:-1, 2:])
        + 4.0 * y255[1:-1, 1:-1]
    )
    ok = ((y255 > 3.0) & (y255 < 252.0)).astype(np.float32)
    blk = 8 if min(resp.shape) >= 48 else 4
    block_sigma = _block_reduce(resp, blk) * np.float32(math.sqrt(math.pi / 2.0) / 6.0)
    block_ok = _block_reduce(ok[1:-1, 1:-1], blk) >= 0.95
    pool = block_sigma[block_ok] if block_ok.sum() >= 8 else block_sigma.ravel()
    noise = _quantile(pool, 0.2)

    # Exposure and tone.
    brightness = float(y.mean())
    cmax_full = np.maximum(np.maximum(r, g), b)
    highlight = float((cmax_full >= 252 / 255).mean())
    shadow = float((y <= 5 / 255).mean())
    contrast = float(y.std())
    tonal_range = _quantile(y, 0.98) - _quantile(y, 0.02)

    # Colour, on a half-resolution grid (global statistics do not need every pixel).
    if min(r.shape) >= 64:
        rh, gh, bh = (_block_reduce(c, 2) for c in (r, g, b))
    else:
        rh, gh, bh = r, g, b
    rg = rh - gh
    yb_opp = 0.5 * (rh + gh) - bh
    colourfulness = 255.0 * (
        math.hypot(float(rg.std()), float(yb_opp.std()))
        + 0.3 * math.hypot(float(rg.mean()), float(yb_opp.mean()))
    )
    cmax = np.maximum(np.maximum(rh, gh), bh)
    chroma = cmax - np.minimum(np.minimum(rh, gh), bh)
    saturation = float((chroma / (cmax + _EPS)).mean())
    # Cast: the chroma of the brightest tenth, which is near-neutral in most scenes.
    yh = 0.299 * rh + 0.587 * gh + 0.114 * bh
    top = yh >= _quantile(yh, 0.9)
    cast = math.hypot(float(rg[top].mean()), float(yb_opp[top].mean()))
    warmth = float((rh - bh).mean())
    tint = float((gh - 0.5 * (rh + bh)).mean())
    hue_spread, hue_harmony = _hue_stats(rh, gh, bh, chroma)

    edge_density = float((magb > 0.012).mean())
    tilt, line_strength = _tilt(gxb[::2, ::2], gyb[::2, ::2])

    # Vignetting: corner patches against the central region.
    hh, ww = y.shape
    ch, cw = max(1, hh // 6), max(1, ww // 6)
    corners = (
        y[:ch, :cw].mean() + y[:ch, -cw:].mean() + y[-ch:, :cw].mean() + y[-ch:, -cw:].mean()
    ) / 4.0
    centre = y[hh // 4 : hh - hh // 4, ww // 4 : ww - ww // 4].mean()
    vignetting = float(1.0 - (corners + 0.02) / (centre + 0.02))

    out = {
        "sharpness": sharpness,
        "edge_width": edge_width,
        "detail": detail,
        "noise": noise,
        "blockiness": blockiness,
        "brightness": brightness,
        "highlight_clip": highlight,
        "shadow_clip": shadow,
        "contrast": contrast,
        "tonal_range": tonal_range,
        "colourfulness": colourfulness,
        "saturation": saturation,
        "colour_cast": cast,
        "warmth": warmth,
        "tint": tint,
        "hue_spread": hue_spread,
        "hue_harmony": hue_harmony,
        "edge_density": edge_density,
        "tilt": tilt,
        "line_strength": line_strength,
        "vignetting": vignetting,
    }
    out.update(_saliency(r, g, b, y, np.abs(lap)))
    return {k: float(np.nan_to_num(out[k])) for k in FEATURES}
