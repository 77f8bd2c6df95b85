"""Images without labels: every image file under a folder (dataset kind ``folder``).

A deployed scorer (``judgepanel predict``) scores images nobody has rated. Their ids are
their paths relative to the folder, so two files with one name in different subfolders
stay distinct and an id says where its image is.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from judgepanel.datasets._common import DatasetError

IMAGE_SUFFIXES: tuple[str, ...] = (".jpg", ".jpeg", ".png", ".webp", ".gif", ".bmp")
"""File suffixes taken as images (case-insensitive)."""

FOLDER_KIND = "folder"


def load_folder(root: str | Path) -> pd.DataFrame:
    """Every image file under ``root``, recursively, sorted by its relative path.

    Returns:
        Columns ``image_id`` (the path relative to ``root``, with ``/``) and ``path``.

    Raises:
        DatasetError: ``root`` is not a folder, or holds no image file.
    """
    folder = Path(root)
    if not folder.is_dir():
        raise DatasetError(f"{folder}: not a folder of images")
    files = sorted(
        p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES
    )
    if not files:
        raise DatasetError(
            f"{folder}: no image file ({', '.join(IMAGE_SUFFIXES)}) under this folder"
        )
    return pd.DataFrame(
        {
            "image_id": [p.relative_to(folder).as_posix() for p in files],
            "path": [str(p) for p in files],
        }
    )
