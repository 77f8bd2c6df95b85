"""Latent aesthetic properties of a synthetic image, and how they show in its pixels.

Every image has six latent properties on a standard-normal scale, mildly correlated with
each other as real aesthetic attributes are, and a content category:

- ``quality`` (technical quality): blur, sensor noise, JPEG loss, exposure error. Clearly
  visible.
- ``composition``: subject placement relative to the thirds, subject scale, horizon tilt,
  clutter. Visible.
- ``colour`` (colour and tone): saturation, colour cast, contrast, palette harmony.
  Visible.
- ``distinctiveness``: unusual surface texture and subject form. Faint.
- ``emotion`` (emotional impact): warmth of the light, vignette, a little contrast. Faint.
- ``hidden``: what an image means to people (story, context, memories); not in the pixels
  at all. It feeds the emotional and semantic judgements of the raters.

Each knob of `Execution` and `Scene` is drawn from its latent plus its own noise, so no knob
is a deterministic function of one latent and a judge can only estimate the latents.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgepanel_sim import portable as P
from judgepanel_sim.world.render import CONTENTS, Execution, Scene

LATENTS: tuple[str, ...] = (
    "quality",
    "composition",
    "colour",
    "distinctiveness",
    "emotion",
    "hidden",
)

# Correlations between the latents (order of LATENTS). Technical quality, composition and
# colour go together moderately (skilled photographers do all three); distinctiveness,
# emotional impact and meaning go together; the two groups are linked weakly.
LATENT_CORRELATION = np.array(
    [
        [1.00, 0.30, 0.35, 0.10, 0.15, 0.05],
        [0.30, 1.00, 0.30, 0.20, 0.20, 0.10],
        [0.35, 0.30, 1.00, 0.20, 0.30, 0.10],
        [0.10, 0.20, 0.20, 1.00, 0.35, 0.25],
        [0.15, 0.20, 0.30, 0.35, 1.00, 0.35],
        [0.05, 0.10, 0.10, 0.25, 0.35, 1.00],
    ]
)

CONTENT_SHARES: dict[str, float] = {
    "landscape": 0.26,
    "figure": 0.22,
    "architecture": 0.20,
    "still_life": 0.17,
    "pattern": 0.15,
}
assert tuple(sorted(CONTENT_SHARES)) == tuple(sorted(CONTENTS))

# Where a well-composed subject sits: near one of the four thirds intersections.
_THIRDS_X = np.array([1 / 3, 2 / 3])
_THIRDS_Y = np.array([0.42, 0.58])

KNOBS: tuple[str, ...] = (
    "seed",
    "hue",
    "harmony",
    "detail",
    "oddity",
    "blur_sigma",
    "noise_sd",
    "jpeg_quality",
    "exposure",
    "contrast",
    "saturation",
    "cast_warmth",
    "cast_tint",
    "subject_x",
    "subject_y",
    "subject_scale",
    "tilt_deg",
    "clutter",
    "vignette",
    "light_warmth",
)
"""Columns of `knob_table`: every `Scene` field but ``content`` and every `Execution` field."""

OWN_KNOBS: dict[str, tuple[str, ...]] = {
    "quality": ("blur_sigma", "noise_sd", "jpeg_quality", "exposure"),
    "composition": ("subject_x", "subject_y", "subject_scale", "tilt_deg", "clutter"),
    "colour": ("harmony", "saturation", "cast_warmth", "cast_tint", "contrast"),
    "distinctiveness": ("detail", "oddity"),
    "emotion": ("light_warmth", "vignette", "contrast"),
}
"""The knobs `knob_table` draws from each latent (``hidden`` has none)."""


def sample_latents(n: int, rng: np.random.Generator) -> pd.DataFrame:
    """``n`` images' latent properties (columns `LATENTS`) and ``content`` category."""
    chol = P.cholesky(LATENT_CORRELATION)
    z = P.matmul(rng.standard_normal((n, len(LATENTS))), chol.T)
    table = pd.DataFrame(z, columns=list(LATENTS))
    names = list(CONTENT_SHARES)
    shares = np.array([CONTENT_SHARES[c] for c in names])
    table.insert(0, "content", np.asarray(names)[rng.choice(len(names), size=n, p=shares)])
    return table


def unit_mix(mix: dict[str, float]) -> np.ndarray:
    """A latent mix as a vector over LATENTS with unit variance under the correlations."""
    w = np.array([mix.get(name, 0.0) for name in LATENTS])
    return w / np.sqrt(P.dot(w, P.matvec(LATENT_CORRELATION, w)))


_softplus = P.softplus
_sigmoid = P.sigmoid


def knob_table(latents: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """The rendering knobs of each image, drawn from its latents plus knob-specific noise.

    Defects are ``softplus(-loading * latent + noise - offset)``: nearly zero for a good
    image, growing smoothly for a poor one. The numbers below are natural units (pixels,
    8-bit levels, stops, degrees) chosen so that a latent of -2 gives a clearly flawed
    picture and +2 a clean one.
    """
    n = len(latents)
    q = latents["quality"].to_numpy()
    c = latents["composition"].to_numpy()
    t = latents["colour"].to_numpy()
    d = latents["distinctiveness"].to_numpy()
    e = latents["emotion"].to_numpy()

    def eps() -> np.ndarray:
        return rng.standard_normal(n)

    def sign() -> np.ndarray:
        return np.where(rng.random(n) < 0.5, -1.0, 1.0)

    k = pd.DataFrame(index=range(n))
    k["seed"] = rng.integers(0, 2**31 - 1, n)
    k["hue"] = rng.random(n)
    # colour and tone: palette harmony, saturation, cast, contrast
    k["harmony"] = _sigmoid(1.1 * t + 0.9 * eps() + 0.8)
    sat_err = _softplus(-1.0 * t + 0.6 * eps() - 0.6)
    k["saturation"] = P.exp(sign() * 0.45 * sat_err)
    cast = _softplus(-0.9 * t + 0.6 * eps() - 0.8)
    k["cast_warmth"] = np.clip(0.45 * cast * eps(), -1.0, 1.0)
    k["cast_tint"] = np.clip(0.30 * cast * eps(), -1.0, 1.0)
    tone_err = _softplus(-0.8 * t + 0.6 * eps() - 0.8)
    # emotional impact adds a little mood contrast on top of the tone error
    k["contrast"] = P.exp(sign() * 0.35 * tone_err + 0.06 * e)
    # technical quality: blur, noise, JPEG loss, exposure error
    k["blur_sigma"] = 1.6 * _softplus(-1.1 * q + 0.6 * eps() - 1.0)
    k["noise_sd"] = 6.0 * _softplus(-1.0 * q + 0.7 * eps() - 1.2)
    jpeg = 92.0 - 35.0 * _softplus(-0.9 * q + 0.7 * eps() - 1.3)
    k["jpeg_quality"] = np.clip(np.round(jpeg), 12, 95).astype(int)
    k["exposure"] = sign() * 0.9 * _softplus(-0.9 * q + 0.7 * eps() - 1.0)
    # composition: distance from a thirds point, scale error, tilt, clutter
    place_err = _softplus(-1.0 * c + 0.6 * eps() - 0.5)
    angle = rng.uniform(0, 2 * np.pi, n)
    tx = _THIRDS_X[rng.integers(0, 2, n)]
    ty = _THIRDS_Y[rng.integers(0, 2, n)]
    k["subject_x"] = np.clip(tx + 0.18 * place_err * P.cos(angle), 0.06, 0.94)
    k["subject_y"] = np.clip(ty + 0.14 * place_err * P.sin(angle), 0.12, 0.88)
    scale_err = _softplus(-0.9 * c + 0.6 * eps() - 0.7)
    too_small = rng.random(n) < 0.6
    k["subject_scale"] = 0.45 * P.exp(np.where(too_small, -0.55, 0.45) * scale_err)
    k["tilt_deg"] = np.clip(4.0 * _softplus(-0.9 * c + 0.6 * eps() - 1.0) * eps(), -25, 25)
    k["clutter"] = rng.poisson(4.0 * _softplus(-0.9 * c + 0.6 * eps() - 0.8))
    # distinctiveness (faint): surface texture and an unusual subject form
    k["detail"] = _sigmoid(0.5 * d + 1.0 * eps() - 0.3)
    k["oddity"] = _sigmoid(0.5 * d + 1.0 * eps() - 1.6)
    # emotional impact (faint): the warmth of the light and a vignette
    k["light_warmth"] = np.clip(0.25 * e + 0.50 * eps(), -1.0, 1.0)
    k["vignette"] = np.clip(0.10 + 0.06 * e + 0.12 * eps(), 0.0, 0.6)
    return k[list(KNOBS)]


def picture(content: str, knobs: pd.Series | dict) -> tuple[Scene, Execution]:
    """The `Scene` and `Execution` of one row of `knob_table`."""
    scene = Scene(
        content=content,
        seed=int(knobs["seed"]),
        hue=float(knobs["hue"]),
        harmony=float(knobs["harmony"]),
        detail=float(knobs["detail"]),
        oddity=float(knobs["oddity"]),
    )
    execution = Execution(
        blur_sigma=float(knobs["blur_sigma"]),
        noise_sd=float(knobs["noise_sd"]),
        jpeg_quality=int(knobs["jpeg_quality"]),
        exposure=float(knobs["exposure"]),
        contrast=float(knobs["contrast"]),
        saturation=float(knobs["saturation"]),
        cast_warmth=float(knobs["cast_warmth"]),
        cast_tint=float(knobs["cast_tint"]),
        subject_x=float(knobs["subject_x"]),
        subject_y=float(knobs["subject_y"]),
        subject_scale=float(knobs["subject_scale"]),
        tilt_deg=float(knobs["tilt_deg"]),
        clutter=int(knobs["clutter"]),
        vignette=float(knobs["vignette"]),
        light_warmth=float(knobs["light_warmth"]),
    )
    return scene, execution


def knob_visibility(n: int = 20_000, seed: int = 0, folds: int = 5) -> pd.DataFrame:
    """How much of each latent the rendering knobs carry: cross-validated R^2.

    A gradient-boosting regression (scikit-learn's histogram variant) of each latent on
    its own knobs (`OWN_KNOBS`) and on all knobs, over ``n`` fresh draws with ``folds``-fold
    cross-validation. The pixels carry the knobs only with loss, so these are upper bounds
    for any judge. The world card's visibility table is this function's output.

    Returns:
        One row per latent: ``latent``, ``r2_own_knobs`` (NaN for ``hidden``) and
        ``r2_all_knobs``.
    """
    from sklearn.ensemble import HistGradientBoostingRegressor
    from sklearn.model_selection import KFold, cross_val_score

    rng = np.random.default_rng(seed)
    latents = sample_latents(n, rng)
    knobs = knob_table(latents, rng)
    splits = KFold(folds, shuffle=True, random_state=seed)

    def r2(columns: tuple[str, ...], y: np.ndarray) -> float:
        model = HistGradientBoostingRegressor(
            max_iter=300, learning_rate=0.05, early_stopping=True, random_state=seed
        )
        x = knobs[list(columns)].to_numpy(float)
        return float(cross_val_score(model, x, y, cv=splits, scoring="r2").mean())

    rows = []
    for name in LATENTS:
        y = latents[name].to_numpy()
        own = OWN_KNOBS.get(name)
        rows.append(
            {
                "latent": name,
                "r2_own_knobs": r2(own, y) if own else float("nan"),
                "r2_all_knobs": r2(KNOBS, y),
            }
        )
    return pd.DataFrame(rows)
