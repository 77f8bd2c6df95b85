"""Eleven low-level image statistics (F11): a label-matched baseline computed from pixels.

The rubric-fusion study spends the combiner's labels on these statistics too, under the
same folds and protocol, to ask whether the judges add anything beyond what a regression
on simple pixel measurements already finds. Every statistic is a vectorised numpy/scipy
computation on the decoded image; nothing is learned. Luminance is Rec. 709 luma of the
gamma-encoded values, in [0, 1].

The definitions are in ``DEFINITIONS`` (its order is the column order, ``F11``).

The working image is the decoded image reduced by block averaging to at most
``WORK_SIDE`` pixels on the long side, so statistics are comparable across resolutions;
blockiness and noise are measured before the reduction, where the grid and the pixel noise
exist. Results are cached by a hash of the file's bytes, so moving or renaming a file does
not recompute it and changing its content does.
"""

from __future__ import annotations

import fcntl
import hashlib
import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from PIL import Image
from scipy import ndimage

DEFINITIONS: dict[str, str] = {
    "mean_luminance": "Mean luma: overall brightness, 0-1.",
    "luminance_sd": "Standard deviation of luma: global contrast.",
    "clipped_highlights": "Share of pixels whose brightest channel is at or above 250/255.",
    "clipped_shadows": "Share of pixels whose brightest channel is at or below 5/255.",
    "colourfulness": (
        "Hasler-Suesstrunk M on 8-bit values: with rg = R - G and yb = (R + G)/2 - B, "
        "sqrt(sd(rg)^2 + sd(yb)^2) + 0.3 sqrt(mean(rg)^2 + mean(yb)^2); 0 for grey."
    ),
    "mean_saturation": "Mean HSV saturation (max - min) / max, 0 for black pixels.",
    "laplacian_sharpness": (
        "log10(1 + variance of the 4-neighbour Laplacian of luma in 8-bit units) on the "
        "working image: crisper detail (or more noise) is higher."
    ),
    "noise_sigma": (
        "Immerkaer's fast noise estimate (8-bit units) at native resolution: mean absolute "
        "response of the mask [[1,-2,1],[-2,4,-2],[1,-2,1]] times sqrt(pi/2)/6, over pixels "
        "whose gradient is below the image's 90th percentile (edges are not noise); fine "
        "texture still raises it."
    ),
    "edge_density": (
        "Share of working-image pixels on a thin edge: Sobel gradient magnitude (luma per "
        "pixel, after a 3x3 box blur) above 0.08 and a local maximum across the edge; how "
        "busy the frame is."
    ),
    "jpeg_blockiness": (
        "Mean absolute luma step across the 8x8 grid lines at native resolution divided by "
        "the mean step between other neighbours, minus 1: 0 without a grid."
    ),
    "thirds_offset": (
        "Distance (frame units) from the centroid of a colour-contrast saliency map (at 128 px "
        "on the long side) to the nearest rule-of-thirds point; saliency is the squared "
        "distance of each lightly "
        "blurred pixel's opponent colour (luma, R - G, (R + G)/2 - B) from the mean colour. "
        "0 = on a thirds point, about 0.236 = centred."
    ),
}
"""Each statistic's definition, in column order."""

F11: tuple[str, ...] = tuple(DEFINITIONS)
"""The eleven statistics, in column order."""

VERSION = 2
"""Bumped whenever a definition changes, so cached values of an old definition are unused.

2: luma and gradient magnitudes summed elementwise in a fixed order (were BLAS products and
``hypot``), so the statistics, and every threshold on them, are the same on every CPU."""

WORK_SIDE = 512
"""Long side (px) of the working image."""

SALIENCY_SIDE = 128
"""Long side (px) at which the saliency map of ``thirds_offset`` is computed."""

EDGE_THRESHOLD = 0.08
"""Sobel magnitude (luma per pixel) above which a pixel counts as an edge."""

_LUMA = np.array([0.2126, 0.7152, 0.0722])
_THIRDS = np.array([(x, y) for x in (1 / 3, 2 / 3) for y in (1 / 3, 2 / 3)])


def _luma(rgb: np.ndarray) -> np.ndarray:
    """Luma of an (H, W, 3) image, R, G and B weighted and summed in that order.

    Elementwise on purpose: ``rgb @ _LUMA`` goes through BLAS, whose kernels round
    differently on different CPUs, and edge and flat-area thresholds are taken on luma.
    """
    return rgb[..., 0] * _LUMA[0] + rgb[..., 1] * _LUMA[1] + rgb[..., 2] * _LUMA[2]


def _channel_max(rgb: np.ndarray) -> np.ndarray:
    """The brightest channel of each pixel: ``rgb.max(axis=-1)``, the same values, without
    numpy's slow reduction over a last axis of length 3."""
    return np.maximum(np.maximum(rgb[..., 0], rgb[..., 1]), rgb[..., 2])


def _channel_min(rgb: np.ndarray) -> np.ndarray:
    """The darkest channel of each pixel, as :func:`_channel_max`."""
    return np.minimum(np.minimum(rgb[..., 0], rgb[..., 1]), rgb[..., 2])


def _magnitude(gx: np.ndarray, gy: np.ndarray) -> np.ndarray:
    """sqrt(gx^2 + gy^2) from correctly rounded operations (``np.hypot`` is the C library's)."""
    return np.sqrt(gx * gx + gy * gy)


def _reduce(rgb: np.ndarray, side: int = WORK_SIDE) -> np.ndarray:
    """Block-average an (H, W, C) float image by the smallest integer factor that fits."""
    h, w = rgb.shape[:2]
    f = max(1, math.ceil(max(h, w) / side))
    if f == 1:
        return rgb
    h2, w2 = h // f * f, w // f * f
    return rgb[:h2, :w2].reshape(h2 // f, f, w2 // f, f, -1).mean(axis=(1, 3))


def _laplacian(y: np.ndarray) -> np.ndarray:
    return y[1:-1, :-2] + y[1:-1, 2:] + y[:-2, 1:-1] + y[2:, 1:-1] - 4 * y[1:-1, 1:-1]


def _sobel(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    gx = ndimage.sobel(y, axis=1, mode="nearest") / 4.0  # a unit step gives 1
    gy = ndimage.sobel(y, axis=0, mode="nearest") / 4.0
    return gx, gy


def _sobel_magnitude(y: np.ndarray) -> np.ndarray:
    gx, gy = _sobel(y)
    return _magnitude(gx, gy)


def _thin_edges(y: np.ndarray, threshold: float) -> np.ndarray:
    """Edge pixels: gradient above ``threshold`` and a local maximum across the edge.

    The maximum is taken along the dominant gradient axis (horizontal or vertical), so a
    blurred edge counts as one line of pixels, not as a wide band.
    """
    gx, gy = _sobel(y)
    mag = _magnitude(gx, gy)
    pad = np.pad(mag, 1, mode="edge")
    left, right = pad[1:-1, :-2], pad[1:-1, 2:]
    up, down = pad[:-2, 1:-1], pad[2:, 1:-1]
    horizontal = np.abs(gx) >= np.abs(gy)
    # Strict on one side, so a two-pixel plateau (a sharp step) counts once.
    peak = np.where(horizontal, (mag > left) & (mag >= right), (mag > up) & (mag >= down))
    return (mag > threshold) & peak


def _noise_sigma(y255: np.ndarray) -> float:
    if min(y255.shape) < 3:
        return 0.0
    r = (
        y255[:-2, :-2]
        - 2 * y255[:-2, 1:-1]
        + y255[:-2, 2:]
        - 2 * y255[1:-1, :-2]
        + 4 * y255[1:-1, 1:-1]
        - 2 * y255[1:-1, 2:]
        + y255[2:, :-2]
        - 2 * y255[2:, 1:-1]
        + y255[2:, 2:]
    )
    grad = _sobel_magnitude(y255)[1:-1, 1:-1]
    flat = grad <= np.quantile(grad, 0.9)
    if not flat.any():
        return 0.0
    return float(np.abs(r[flat]).mean() * math.sqrt(math.pi / 2) / 6.0)


def _blockiness(y255: np.ndarray) -> float:
    h, w = y255.shape
    parts = []
    for arr, n in ((y255, w), (y255.T, h)):
        if n < 17:
            continue
        d = np.abs(np.diff(arr, axis=1))  # d[:, j] is the step between columns j and j + 1
        border = (np.arange(n - 1) % 8) == 7
        inner = d[:, ~border].mean()
        if inner <= 1e-9:
            parts.append(0.0 if d[:, border].mean() <= 1e-9 else 1.0)
        else:
            parts.append(d[:, border].mean() / inner - 1.0)
    return float(np.mean(parts)) if parts else 0.0


def _thirds_offset(rgb: np.ndarray) -> float:
    rgb = _reduce(rgb, SALIENCY_SIDE)  # a centroid needs no fine detail
    y = _luma(rgb)
    opp = np.stack(
        [y, rgb[..., 0] - rgb[..., 1], (rgb[..., 0] + rgb[..., 1]) / 2 - rgb[..., 2]], axis=-1
    )
    sigma = max(1.0, 0.01 * max(y.shape))
    blurred = ndimage.gaussian_filter(opp, sigma=(sigma, sigma, 0), mode="nearest")
    sal = ((blurred - opp.reshape(-1, 3).mean(axis=0)) ** 2).sum(axis=-1)
    total = sal.sum()
    if total <= 1e-12:
        cx = cy = 0.5
    else:
        h, w = sal.shape
        cx = float((sal.sum(axis=0) * (np.arange(w) + 0.5)).sum() / total / w)
        cy = float((sal.sum(axis=1) * (np.arange(h) + 0.5)).sum() / total / h)
    return float(np.min(_magnitude(_THIRDS[:, 0] - cx, _THIRDS[:, 1] - cy)))


def image_stats(rgb: np.ndarray) -> dict[str, float]:
    """The eleven statistics of one RGB image (H x W x 3, uint8 or float in [0, 255]).

    Raises:
        ValueError: if the array is not an H x W x 3 image of at least 8 px a side.
    """
    arr = np.asarray(rgb)
    if arr.ndim != 3 or arr.shape[2] != 3 or min(arr.shape[:2]) < 8:
        raise ValueError(f"expected an H x W x 3 image of at least 8 px a side, got {arr.shape}")
    native = arr.astype(np.float32)
    y_native = _luma(native.astype(np.float64))  # 8-bit units
    work = _reduce(native).astype(np.float64) / 255.0
    y = _luma(work)
    mx = _channel_max(work)
    mn = _channel_min(work)
    rg = (work[..., 0] - work[..., 1]) * 255.0
    yb = ((work[..., 0] + work[..., 1]) / 2 - work[..., 2]) * 255.0
    with np.errstate(divide="ignore", invalid="ignore"):
        sat = np.where(mx > 0, (mx - mn) / mx, 0.0)
    smooth = ndimage.uniform_filter(y, size=3, mode="nearest")
    native_max = _channel_max(native)
    return {
        "mean_luminance": float(y.mean()),
        "luminance_sd": float(y.std()),
        "clipped_highlights": float((native_max >= 250).mean()),
        "clipped_shadows": float((native_max <= 5).mean()),
        "colourfulness": float(
            math.hypot(rg.std(), yb.std()) + 0.3 * math.hypot(rg.mean(), yb.mean())
        ),
        "mean_saturation": float(sat.mean()),
        "laplacian_sharpness": float(math.log10(1.0 + _laplacian(y * 255.0).var())),
        "noise_sigma": _noise_sigma(y_native),
        "edge_density": float(_thin_edges(smooth, EDGE_THRESHOLD).mean()),
        "jpeg_blockiness": _blockiness(y_native),
        "thirds_offset": _thirds_offset(work),
    }


def file_digest(path: str | Path) -> str:
    """SHA-256 of a file's bytes (the cache key, with ``VERSION``)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def stats_of_file(path: str | Path) -> dict[str, float]:
    """Decode an image file to RGB and compute its statistics."""
    try:
        with Image.open(path) as img:
            rgb = np.asarray(img.convert("RGB"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: cannot decode the image ({exc})") from exc
    return image_stats(rgb)


def _cache_file(cache_dir: Path) -> Path:
    return cache_dir / f"imagestats-v{VERSION}.parquet"


def _load_cache(cache_dir: Path | None) -> pd.DataFrame:
    if cache_dir is None or not _cache_file(cache_dir).exists():
        return pd.DataFrame(columns=["digest", *F11]).set_index("digest")
    return pd.read_parquet(_cache_file(cache_dir)).set_index("digest")


def _save_cache(cache_dir: Path, fresh: pd.DataFrame) -> None:
    """Add ``fresh`` rows to the cache file.

    Under a lock, the file is read again and merged, so two processes filling the cache at
    once (two datasets' comparators) keep each other's rows.
    """
    cache_dir.mkdir(parents=True, exist_ok=True)
    target = _cache_file(cache_dir)
    with open(target.with_suffix(".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        current = _load_cache(cache_dir)
        table = fresh
        if len(current):
            table = pd.concat([current, fresh[~fresh.index.isin(current.index)]])
        tmp = target.with_suffix(f".tmp{os.getpid()}")
        table.reset_index().to_parquet(tmp, index=False)
        tmp.replace(target)  # atomic: a reader never sees half a file


def _stats_after(setup: Callable[[], None] | None, path: str) -> dict[str, float]:
    """:func:`stats_of_file` of ``path``, after ``setup`` in the process that runs it."""
    if setup is not None:
        setup()
    return stats_of_file(path)


def image_stats_table(
    images: pd.DataFrame,
    *,
    cache_dir: str | Path | None = None,
    n_jobs: int | None = 1,
    worker_setup: Callable[[], None] | None = None,
) -> pd.DataFrame:
    """F11 for every image of a table with ``image_id`` and ``path``, indexed by image_id.

    Values already cached under ``cache_dir`` (by file content) are read, the rest are
    computed (in parallel with ``n_jobs``) and added to the cache. ``worker_setup`` (a
    module-level function, so that it pickles) runs before each task in the process that
    computes it: a process-wide setting such as an allocator's, never a value.

    Raises:
        ValueError: on a missing column, a missing file or an undecodable image, naming it.
    """
    for col in ("image_id", "path"):
        if col not in images.columns:
            raise ValueError(f"the image table has no column {col!r}")
    paths = images["path"].astype(str).tolist()
    absent = [p for p in paths if not Path(p).is_file()]
    if absent:
        raise ValueError(f"{len(absent)} image file(s) not found, e.g. {absent[:3]}")
    cache = Path(cache_dir) if cache_dir is not None else None
    digests = [file_digest(p) for p in paths]
    cached = _load_cache(cache)
    todo = sorted(
        {d: p for d, p in zip(digests, paths, strict=True) if d not in cached.index}.items()
    )
    if todo:
        computed = Parallel(n_jobs=n_jobs)(delayed(_stats_after)(worker_setup, p) for _, p in todo)
        fresh = pd.DataFrame(computed, index=pd.Index([d for d, _ in todo], name="digest"))
        cached = pd.concat([cached, fresh[list(F11)]]) if len(cached) else fresh[list(F11)]
        if cache is not None:
            _save_cache(cache, fresh[list(F11)])
    out = cached.loc[digests, list(F11)].astype(float)
    out.index = pd.Index(images["image_id"].astype(str).tolist(), name="image_id")
    return out


def describe() -> pd.DataFrame:
    """The statistics and their definitions, for a notebook table."""
    return pd.DataFrame({"statistic": list(DEFINITIONS), "definition": list(DEFINITIONS.values())})


def stats_of(
    images: pd.DataFrame,
    items: Sequence[str] | pd.Index,
    *,
    cache_dir: str | Path | None = None,
    n_jobs: int | None = 1,
) -> pd.DataFrame:
    """:func:`image_stats_table` of the images ``items`` names, in that order (a study's
    images with every feature), from a loader's image table (``image_id``, ``path``)."""
    rows = images.set_index("image_id").loc[list(items)].reset_index()
    return image_stats_table(rows[["image_id", "path"]], cache_dir=cache_dir, n_jobs=n_jobs)
