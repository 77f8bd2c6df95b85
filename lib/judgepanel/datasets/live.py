"""LIVE in the Wild (Ghadiyaram & Bovik, 2016): the three ``Data/*.mat`` files, ``Images/``.

``Data/AllImages_release.mat`` (``AllImages_release``, the image names),
``Data/AllMOS_release.mat`` (``AllMOS_release``, MOS on 0-100) and
``Data/AllStdDev_release.mat`` (``AllStdDev_release``, the SD of each image's ratings)
hold one value per image, in the same order. The release gives no per-image count of
ratings; the authors report about 175 per image, used as n for every image
(``ratings_per_image``) in the classical-test-theory ceiling, and the description says so.
The first seven images were the study's training images (under ``Images/trainingImages/``);
``training_images='drop'`` (default) leaves them out as the authors' evaluations do.
LIVE in the Wild rates technical quality, not aesthetics.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from judgepanel.datasets._common import Dataset, DatasetError, require_file
from judgepanel.datasets.assemble import assemble
from judgepanel.datasets.attribute import HOLISTIC, Attribute
from judgepanel.datasets.presence import apply_policy, check_policy

KIND = "live_wild"
FILES = {
    "names": "Data/AllImages_release.mat",
    "mos": "Data/AllMOS_release.mat",
    "sd": "Data/AllStdDev_release.mat",
}
IMAGE_DIR = "Images"
TRAINING_DIR = "Images/trainingImages"
N_TRAINING = 7
RATINGS_PER_IMAGE = 175
ATTRIBUTES = (Attribute("MOS", "score", 0.0, 100.0, True, HOLISTIC),)
CITATION = (
    "Ghadiyaram, D., Bovik, A. C. (2016). Massive online crowdsourced study of subjective "
    "and objective picture quality. IEEE TIP 25(1)."
)
LICENCE = "not stated in the files: the terms of the LIVE in the Wild page (research use)"


def load_live_wild(
    root: str | Path,
    *,
    missing_images: str = "error",
    training_images: str = "drop",
    ratings_per_image: int = RATINGS_PER_IMAGE,
    sd_ddof: int = 1,
) -> Dataset:
    """Read a LIVE in the Wild folder as released into a `Dataset` of means, SDs and n.

    Args:
        training_images: ``drop`` (the first seven, the study's training images) or
            ``keep`` (split ``training``).
        ratings_per_image: n of every image (the release gives none per image).
        sd_ddof: the released SD's ddof (1: a sample SD).
        missing_images: see `judgepanel.datasets.presence`.

    Raises:
        DatasetError: a file or variable is missing, the three lists differ in length, a
            MOS is outside 0-100, an SD is negative, an option is unknown, or
            (``error``) an image is absent.
    """
    root = Path(root).expanduser().resolve()
    check_policy(missing_images)
    if training_images not in ("drop", "keep"):
        raise DatasetError(f"training_images={training_images!r}: expected drop or keep")
    if sd_ddof not in (0, 1) or ratings_per_image < 2:
        raise DatasetError("sd_ddof must be 0 or 1 and ratings_per_image at least 2")
    names = [str(np.asarray(x).reshape(-1)[0]).strip() for x in _variable(root, "names")]
    mos, sd = (np.asarray(_variable(root, k), dtype=float) for k in ("mos", "sd"))
    if not len(names) == len(mos) == len(sd):
        raise DatasetError(
            f"{root / 'Data'}: {len(names)} image names, {len(mos)} MOS and {len(sd)} SDs; "
            "the three files list the same images in the same order"
        )
    for what, values, bad in (("MOS", mos, (mos < 0) | (mos > 100)), ("SD", sd, sd < 0)):
        bad = bad | ~np.isfinite(values)
        if bad.any():
            k = int(np.argmax(bad))
            raise DatasetError(
                f"{root / FILES[what.lower()]}: value {k + 1} ({names[k]}) is {values[k]}, not "
                f"{'in 0-100' if what == 'MOS' else 'a non-negative SD'}"
            )
    n = np.full(len(names), float(ratings_per_image))
    if sd_ddof == 0:
        sd = sd * np.sqrt(n / (n - 1))
    split = np.where(np.arange(len(names)) < N_TRAINING, "training", "test")
    folder = np.where(split == "training", str(root / TRAINING_DIR), str(root / IMAGE_DIR))
    paths = [str(Path(f) / name) for f, name in zip(folder, names, strict=True)]
    images = pd.DataFrame({"image_id": names, "path": paths, "split": split})
    keep = np.ones(len(names), bool) if training_images == "keep" else split != "training"
    images = images[keep].reset_index(drop=True)
    summary = pd.DataFrame({"image_id": names, "attribute": "score", "mean": mos, "sd": sd, "n": n})
    summary = summary[keep].reset_index(drop=True)
    ddof = "a sample SD (ddof 1)" if sd_ddof == 1 else "a population SD (ddof 0), converted"
    notes = (
        "read Data/AllImages_release.mat, AllMOS_release.mat, AllStdDev_release.mat",
        f"n = {ratings_per_image} ratings for every image (the authors' reported count; the "
        f"release gives none per image); SD read as {ddof}",
        f"the first {N_TRAINING} images (training images of the study): {training_images}",
    )
    ds = assemble(
        KIND, root, images, ATTRIBUTES, root / "Data", summary=summary,
        licence=LICENCE, citation=CITATION, notes=notes,
    )  # fmt: skip
    return apply_policy(ds, missing_images)


def _variable(root: Path, which: str) -> np.ndarray:
    """The one variable of a release .mat file, flattened."""
    from scipy.io import loadmat  # only the .mat forms need it

    path = require_file(root / FILES[which], f"the LIVE in the Wild file {FILES[which]}")
    name = Path(FILES[which]).stem
    try:
        mat = loadmat(path)
    except (ValueError, OSError, NotImplementedError) as exc:
        raise DatasetError(f"{path}: cannot be read as a MATLAB file ({exc})") from None
    if name not in mat:
        found = ", ".join(k for k in mat if not k.startswith("__"))
        raise DatasetError(
            f"{path}: missing variable {name} (found: {found}); use the release's own file"
        )
    return np.asarray(mat[name]).reshape(-1)
