"""The model file of a deployed scorer: numeric arrays and one JSON document, in a zip.

The file is what ``numpy.savez`` writes: a zip of ``.npy`` arrays, one of which holds the
JSON metadata as UTF-8 bytes. It is read with ``allow_pickle=False``, so loading it runs
no code: a pickle, or an array of Python objects inside the zip, is refused with an error
before anything in it is executed. (A pickle runs arbitrary code as it loads, which makes
a shared model file a way to run someone else's program.)
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from judgepanel.errors import JudgepanelError

FORMAT = "judgepanel-deployed-scorer"
VERSION = 1
META_KEY = "meta_json"
ZIP_MAGIC = b"PK\x03\x04"


class ModelFileError(JudgepanelError, ValueError):
    """A model file that cannot be loaded safely, or is not a deployed scorer."""


@dataclass(frozen=True)
class DeployedModel:
    """A fitted arm and everything that must match before it scores new images.

    Attributes:
        meta: JSON-safe metadata (see :func:`judgepanel.studies.fusion.deploy.fit.fit_arm`
            and :func:`describe_model`): arm, families, model ids, prompt hashes, the
            rubric's SHA-256, k, R, temperature, feature columns, the training dataset's
            hash, package versions and the out-of-fold accuracy.
        arrays: the combiner's parameters (``combiner.*``) and the training features
            (``train_X``, ``train_y``) that the shift check compares new images with.
    """

    meta: dict[str, Any]
    arrays: dict[str, NDArray] = field(default_factory=dict)

    @property
    def arm(self) -> str:
        return str(self.meta["arm"])

    @property
    def families(self) -> dict[str, str]:
        """Family name -> model id, in the order of the features."""
        return dict(self.meta["families"])

    @property
    def columns(self) -> list[str]:
        return list(self.meta["feature_columns"])

    def combiner_arrays(self) -> dict[str, NDArray]:
        prefix = "combiner."
        return {k[len(prefix) :]: v for k, v in self.arrays.items() if k.startswith(prefix)}


def save_model(model: DeployedModel, path: str | Path) -> Path:
    """Write ``model`` to ``path`` (a ``.npz`` zip of arrays and JSON); returns the path."""
    path = Path(path)
    if path.suffix != ".npz":
        raise ModelFileError(f"{path}: a model file is written as .npz (arrays and JSON)")
    blob = json.dumps(model.meta, sort_keys=True, allow_nan=True).encode("utf-8")
    arrays = {META_KEY: np.frombuffer(blob, np.uint8)}
    for name, arr in model.arrays.items():
        a = np.asarray(arr)
        if a.dtype.kind not in "biuf":
            raise ModelFileError(f"array {name!r} has dtype {a.dtype}; only numbers are stored")
        arrays[name] = a
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        np.savez_compressed(fh, **arrays)
    return path


def load_model(path: str | Path) -> DeployedModel:
    """Read a model file without running any code in it.

    Raises:
        ModelFileError: the file is missing, is not a zip of arrays (a pickle, for
            instance), holds an array of Python objects, or is not a deployed scorer.
    """
    path = Path(path)
    if not path.is_file():
        raise ModelFileError(f"{path}: no such model file")
    with path.open("rb") as fh:
        head = fh.read(4)
    if head != ZIP_MAGIC:
        raise ModelFileError(
            f"{path}: not a judgepanel model file (expected a zip of .npy arrays and JSON, as "
            "`judgepanel fit` writes); refused without loading it, since a pickle or other "
            "executable format would run code when loaded"
        )
    arrays: dict[str, NDArray] = {}
    try:
        with np.load(path, allow_pickle=False) as npz:
            for name in npz.files:
                arrays[name] = npz[name]
    except ValueError as exc:  # numpy's refusal of pickled (object) arrays
        raise ModelFileError(
            f"{path}: holds pickled Python objects ({exc}); refused without loading them"
        ) from None
    except (OSError, zipfile.BadZipFile, EOFError) as exc:
        raise ModelFileError(f"{path}: unreadable model file ({exc})") from None
    if META_KEY not in arrays:
        raise ModelFileError(f"{path}: no metadata ({META_KEY}); not a judgepanel model file")
    try:
        meta = json.loads(arrays.pop(META_KEY).tobytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelFileError(f"{path}: unreadable metadata ({exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ModelFileError(f"{path}: not a {FORMAT} file")
    if meta.get("version") != VERSION:
        raise ModelFileError(
            f"{path}: model file version {meta.get('version')!r}; this judgepanel reads "
            f"version {VERSION}"
        )
    return DeployedModel(meta, arrays)
