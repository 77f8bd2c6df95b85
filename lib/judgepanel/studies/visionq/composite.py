"""The lettered composite a VisionQ judge sees: one image, one banner-topped tile per choice.

Method names, captions and paper identity never enter the composite; a tile is labelled
only by its letter. The same inputs always give the same PNG bytes.

Geometry (all in pixels; ``n`` tiles):

* Layout: 2 tiles -> 1 row x 2 columns; 3 -> 1 x 3; 4 -> 2 x 2 (reading order A, B / C, D).
  Other counts (1, 5+) use a single row; the benchmark has 2-4.
* Tile side ``S = min(512, longest side over the input crops)``. Each crop is scaled down
  (never up) to fit an ``S x S`` cell, aspect kept, and centred in it; the rest of the
  cell is gutter colour.
* Banner height ``B = max(16, round(S * BANNER_FRACTION))`` with ``BANNER_FRACTION = 1/8``;
  gutter ``G = max(4, round(S * GUTTER_FRACTION))`` with ``GUTTER_FRACTION = 1/32``.
* Each cell is, top to bottom: a white banner ``S x B`` with the black label ``(X)``
  centred on it, a gutter gap ``G``, and the tile cell ``S x S``.
* Cell ``(r, c)`` starts at ``x = G + c (S + G)``, ``y = G + r (B + G + S + G)``; the
  canvas is ``cols S + (cols + 1) G`` wide and ``rows (B + G + S) + (rows + 1) G`` high.
* Colours: gutter ``GUTTER_RGB = (72, 72, 80)`` (also the outer border, so the top-left
  pixel is always gutter), banner ``BANNER_RGB = (255, 255, 255)``, text ``TEXT_RGB =
  (0, 0, 0)``.

A reader can therefore locate tiles from the pixels alone: rows and columns that are
entirely gutter colour separate the cells, the short mostly-white bands are banners, and
the band below each banner is its tile.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from judgepanel.studies.visionq.parse import choice_letters

MAX_TILE = 512
BANNER_FRACTION = 1 / 8
GUTTER_FRACTION = 1 / 32
MIN_BANNER = 16
MIN_GUTTER = 4
GUTTER_RGB: tuple[int, int, int] = (72, 72, 80)
BANNER_RGB: tuple[int, int, int] = (255, 255, 255)
TEXT_RGB: tuple[int, int, int] = (0, 0, 0)
TEXT_FRACTION = 0.7
"""Font size as a share of the banner height."""

Box = tuple[int, int, int, int]
TileInput = Image.Image | bytes | str | Path
_TEXT_LOCK = threading.Lock()


def grid_shape(n: int) -> tuple[int, int]:
    """(rows, columns) for ``n`` tiles: 2 -> 1x2, 3 -> 1x3, 4 -> 2x2, else one row."""
    if n < 1:
        raise ValueError(f"a composite needs at least one tile, got {n}")
    return (2, 2) if n == 4 else (1, n)


@dataclass(frozen=True)
class Geometry:
    """Where everything sits on a composite of ``n`` tiles with tile side ``tile``.

    Attributes:
        n: number of tiles.
        tile: tile cell side S.
        banner: banner height B.
        gutter: gutter width G.
        rows: grid rows.
        cols: grid columns.
        width: canvas width.
        height: canvas height.
        banner_boxes: (x0, y0, x1, y1) of each banner, in reading order (x1, y1 exclusive).
        tile_boxes: (x0, y0, x1, y1) of each S x S tile cell, in reading order.
    """

    n: int
    tile: int
    banner: int
    gutter: int
    rows: int
    cols: int
    width: int
    height: int
    banner_boxes: tuple[Box, ...]
    tile_boxes: tuple[Box, ...]


def geometry(n: int, tile: int) -> Geometry:
    """The documented layout for ``n`` tiles of side ``tile`` (pure; no pixels)."""
    if tile < 1:
        raise ValueError(f"tile side must be positive, got {tile}")
    rows, cols = grid_shape(n)
    banner = max(MIN_BANNER, round(tile * BANNER_FRACTION))
    gutter = max(MIN_GUTTER, round(tile * GUTTER_FRACTION))
    width = cols * tile + (cols + 1) * gutter
    height = rows * (banner + gutter + tile) + (rows + 1) * gutter
    banners: list[Box] = []
    tiles: list[Box] = []
    for i in range(n):
        r, c = divmod(i, cols)
        x0 = gutter + c * (tile + gutter)
        y0 = gutter + r * (banner + gutter + tile + gutter)
        banners.append((x0, y0, x0 + tile, y0 + banner))
        ty = y0 + banner + gutter
        tiles.append((x0, ty, x0 + tile, ty + tile))
    return Geometry(
        n, tile, banner, gutter, rows, cols, width, height, tuple(banners), tuple(tiles)
    )


@dataclass(frozen=True)
class Composite:
    """A built composite.

    Attributes:
        image: the RGB composite.
        geometry: its layout.
        content_boxes: where each scaled crop was pasted inside its tile cell.
        letters: the banner letters in reading order.
    """

    image: Image.Image
    geometry: Geometry
    content_boxes: tuple[Box, ...]
    letters: str

    def png(self) -> bytes:
        """The composite as PNG bytes, with no metadata chunks."""
        return to_png(self.image)


def to_png(image: Image.Image) -> bytes:
    """PNG bytes of ``image`` with fixed encoder settings and no text chunks.

    Fast deflate (level 1): a composite is built at send time for every call, and level 6
    would double that cost for about 15% fewer bytes.
    """
    buf = io.BytesIO()
    image.save(buf, format="PNG", compress_level=1)
    return buf.getvalue()


@cache
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


def _open(tile: TileInput) -> Image.Image:
    if isinstance(tile, Image.Image):
        img = tile
    elif isinstance(tile, bytes):
        img = Image.open(io.BytesIO(tile))
    else:
        img = Image.open(Path(tile))
    img.load()
    return img.convert("RGB")


def _draw_label(draw: ImageDraw.ImageDraw, box: Box, text: str, size: int) -> None:
    font = _font(size)
    # one label at a time: the cached fonts are shared by the threads that render ahead
    with _TEXT_LOCK:
        left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
        x0, y0, x1, y1 = box
        x = x0 + (x1 - x0 - (right - left)) // 2 - left
        y = y0 + (y1 - y0 - (bottom - top)) // 2 - top
        draw.text((x, y), text, font=font, fill=TEXT_RGB)


def fit_tiles(
    tiles: Sequence[TileInput], *, max_tile: int = MAX_TILE
) -> tuple[int, list[Image.Image]]:
    """The tile side S of ``tiles`` and each opened and scaled down (never up) to fit an
    S x S cell, aspect kept: what :func:`lay_out` pastes, in the same order.

    S depends on the set of tiles, not their order, so the rotations of a question can
    share one fit.
    """
    images = [_open(t) for t in tiles]
    if not images:
        raise ValueError("a composite needs at least one tile, got 0")
    side = min(max_tile, max(max(im.size) for im in images))
    fitted = []
    for im in images:
        w, h = im.size
        scale = min(1.0, side / max(w, h))
        if scale < 1.0:
            im = im.resize(
                (max(1, round(w * scale)), max(1, round(h * scale))), Image.Resampling.LANCZOS
            )
        fitted.append(im)
    return side, fitted


def lay_out(side: int, fitted: Sequence[Image.Image], letters: str | None = None) -> Composite:
    """Tiles already fitted to ``side`` (:func:`fit_tiles`), centred in their cells in
    reading order under banners ``(A)``, ``(B)``, ..."""
    letters = letters if letters is not None else choice_letters(len(fitted))
    if len(letters) != len(fitted):
        raise ValueError(f"{len(fitted)} tiles but {len(letters)} letters ({letters!r})")
    geo = geometry(len(fitted), side)
    canvas = Image.new("RGB", (geo.width, geo.height), GUTTER_RGB)
    draw = ImageDraw.Draw(canvas)
    text_size = max(8, round(geo.banner * TEXT_FRACTION))
    content: list[Box] = []
    for im, letter, banner_box, tile_box in zip(
        fitted, letters, geo.banner_boxes, geo.tile_boxes, strict=True
    ):
        draw.rectangle(
            (banner_box[0], banner_box[1], banner_box[2] - 1, banner_box[3] - 1), fill=BANNER_RGB
        )
        _draw_label(draw, banner_box, f"({letter})", text_size)
        w, h = im.size
        x = tile_box[0] + (side - w) // 2
        y = tile_box[1] + (side - h) // 2
        canvas.paste(im, (x, y))
        content.append((x, y, x + w, y + h))
    return Composite(canvas, geo, tuple(content), letters)


def build_composite(
    tiles: Sequence[TileInput], letters: str | None = None, *, max_tile: int = MAX_TILE
) -> Composite:
    """Lay ``tiles`` out in reading order under banners ``(A)``, ``(B)``, ...

    Args:
        tiles: the crops, as PIL images, encoded bytes or file paths, in panel order.
        letters: banner letters; defaults to A, B, C, ... for ``len(tiles)``.
        max_tile: the cap on the tile side (512 by default).

    Returns:
        The composite with its geometry; ``.png()`` gives the bytes to send.
    """
    side, fitted = fit_tiles(tiles, max_tile=max_tile)
    return lay_out(side, fitted, letters)


def composite_png(tiles: Sequence[TileInput], letters: str | None = None) -> bytes:
    """Shortcut: the PNG bytes of :func:`build_composite`."""
    return build_composite(tiles, letters).png()
