"""The simulated judges' trained perception: a read-out of each rubric dimension from cues.

A real VLM has learned from many pictures what sharpness, placement or colour harmony look
like. The simulated families get the counterpart once, offline: on a calibration set of
renders whose properties are known (drawn with its own seed, never used for any dataset),
a ridge regression reads each rubric dimension from the standardised pixel cues. The
weights are frozen in ``calibration.json``; at serving time a family only combines them
with its own cue weighting (its character) over the cues of the pixels it receives. No
label, latent or id reaches the server.

Regenerate the file with ``python -m judgepanel.sim.calibration`` after changing the
renderer or the cues, and say so in the commit.
"""

from __future__ import annotations

import json
from dataclasses import replace
from functools import cache
from pathlib import Path

import numpy as np

from judgepanel.prompts import DIMENSIONS

CALIBRATION_FILE = Path(__file__).with_name("calibration.json")
CALIBRATION_SEED = 90_210
CALIBRATION_IMAGES = 1200


@cache
def ideal_weights() -> dict[str, dict[str, float]]:
    """Per rubric dimension, the frozen weight of every cue in the trained read-out.

    Each read-out is scaled to unit standard deviation over the calibration renders.
    """
    data = json.loads(CALIBRATION_FILE.read_text(encoding="utf-8"))
    return {d: dict(data["weights"][d]) for d in DIMENSIONS}


def fit(n_images: int = CALIBRATION_IMAGES, seed: int = CALIBRATION_SEED) -> dict:
    """Render a calibration set and fit the read-outs (a minute or two; offline only)."""
    import io

    from PIL import Image
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import KFold, cross_val_predict

    from judgepanel.sim.families import cues
    from judgepanel.sim.perception import features
    from judgepanel.synth.aesthetic import knob_table, picture, sample_latents
    from judgepanel.synth.render import render, to_jpeg

    rng = np.random.default_rng(seed)
    latents = sample_latents(n_images, rng)
    knobs = knob_table(latents, rng)
    rows = []
    for i in range(n_images):
        scene, execution = picture(latents["content"].iloc[i], knobs.iloc[i])
        img = render(scene, replace(execution, jpeg_quality=100))
        # Judges see the encoded file, so the calibration does too (as the writers encode).
        data = to_jpeg(img, int(execution.jpeg_quality))
        rgb = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))
        rows.append(cues(features(rgb)))
    names = sorted(rows[0])
    X = np.array([[r[k] for k in names] for r in rows])
    weights: dict[str, dict[str, float]] = {}
    fit_quality: dict[str, float] = {}
    for dim in DIMENSIONS:
        y = latents[dim].to_numpy(float)
        # Cues are oriented so that more is better; non-negative weights keep a confound of
        # the calibration set (heavy JPEG also smooths noise away) from teaching the read-out
        # that visible noise is good.
        model = Ridge(alpha=_alpha(X, y), positive=True).fit(X, y)
        pred = X @ model.coef_
        scale = float(pred.std()) or 1.0
        weights[dim] = {
            k: round(float(w) / scale, 5) for k, w in zip(names, model.coef_, strict=True)
        }
        oof = cross_val_predict(
            Ridge(alpha=model.alpha, positive=True), X, y, cv=KFold(5, shuffle=True, random_state=0)
        )
        fit_quality[dim] = round(float(np.corrcoef(oof, y)[0, 1]), 3)
    return {
        "seed": seed,
        "n_images": n_images,
        "out_of_fold_r": fit_quality,
        "weights": weights,
    }


def _alpha(X: np.ndarray, y: np.ndarray) -> float:
    """The ridge penalty, chosen by efficient leave-one-out over a grid (unconstrained fit)."""
    from sklearn.linear_model import RidgeCV

    return float(RidgeCV(alphas=np.logspace(-2, 3, 21)).fit(X, y).alpha_)


def main() -> None:
    result = fit()
    CALIBRATION_FILE.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    print(f"wrote {CALIBRATION_FILE.name}: out-of-fold r {result['out_of_fold_r']}")


if __name__ == "__main__":
    main()
