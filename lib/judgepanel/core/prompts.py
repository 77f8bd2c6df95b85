"""The seed rubric's names and the request helpers (the rubric API is `judgepanel.core.rubric`).

The rubric itself is data (:mod:`judgepanel.core.rubric`): a run names its rubric file or
folder, and prompts, parsing and store keys follow from it. The constants here are the
seed rubric's, kept for the seed study's own modules (the rubric-fusion analyses).
"""

from __future__ import annotations

import base64
from pathlib import Path

from judgepanel.core.rubric import PINNED_FILES, default_rubric_path
from judgepanel.core.rubric import sha256sums_text as _sums

__all__ = [
    "DIMENSIONS",
    "VALIDATED",
    "bytes_data_url",
    "image_data_url",
    "rubric_dir",
    "sha256sums_text",
]

DIMENSIONS: tuple[str, ...] = ("quality", "composition", "colour", "distinctiveness", "emotion")
"""The seed rubric's dimensions, in the order of Leder et al.'s stages."""

VALIDATED: tuple[str, ...] = ("quality", "composition", "colour")
"""The seed dimensions with a human per-attribute rating in EVA and PARA."""


def rubric_dir() -> Path:
    """The project's rubric folder, ``rubric/`` at the project root."""
    return default_rubric_path()


def sha256sums_text(directory: Path | None = None, files: tuple[str, ...] = PINNED_FILES) -> str:
    """The ``sha256sum``-format listing of the rubric files, computed from their bytes."""
    return _sums(directory or rubric_dir(), files)


def image_data_url(path: str | Path) -> str:
    """The image file as a base64 data URL, sent as is (no re-encoding)."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix in (".jpg", ".jpeg"):
        mime = "image/jpeg"
    elif suffix == ".png":
        mime = "image/png"
    elif suffix == ".webp":
        mime = "image/webp"
    else:
        raise ValueError(f"{p}: unsupported image type {suffix!r}; expected JPEG, PNG or WebP")
    return bytes_data_url(p.read_bytes(), mime)


def bytes_data_url(data: bytes, mime: str = "image/png") -> str:
    """In-memory image bytes as a base64 data URL."""
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
