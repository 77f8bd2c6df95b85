"""Reading a ``multipart/form-data`` body: the one form the files API receives.

The SDK uploads a file as a form with a ``purpose`` field and a ``file`` part; this reads
the fields and files of such a body without a dependency, and rejects what it cannot read
with a 400 that says why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from judgepanel_sim.judges.protocol import ApiError

_BOUNDARY = re.compile(r'boundary="?([^";]+)"?', re.IGNORECASE)
_NAME = re.compile(r'\bname="([^"]*)"', re.IGNORECASE)
_FILENAME = re.compile(r'\bfilename="([^"]*)"', re.IGNORECASE)


@dataclass(frozen=True)
class FormPart:
    """One part of a form: its field name, file name (``None`` for a plain field), bytes."""

    name: str
    filename: str | None
    data: bytes


def parse_form(content_type: str, body: bytes) -> dict[str, FormPart]:
    """The parts of a ``multipart/form-data`` body, by field name (the last one wins).

    Raises:
        ApiError: 400 for another content type, a missing boundary or a malformed part.
    """
    if not content_type.lower().startswith("multipart/form-data"):
        raise ApiError(
            400, f"expected a multipart/form-data upload, got {content_type or 'none'!r}"
        )
    match = _BOUNDARY.search(content_type)
    if match is None:
        raise ApiError(400, "the multipart/form-data upload names no boundary")
    delimiter = b"--" + match.group(1).encode("latin-1")
    pieces = body.split(delimiter)
    if len(pieces) < 3 or not pieces[-1].startswith(b"--"):
        raise ApiError(400, "the multipart/form-data body is not terminated by its boundary")
    parts: dict[str, FormPart] = {}
    for piece in pieces[1:-1]:
        if not piece.startswith(b"\r\n") or not piece.endswith(b"\r\n"):
            raise ApiError(400, "a part of the multipart/form-data body is malformed")
        head, sep, data = piece[2:-2].partition(b"\r\n\r\n")
        if not sep:
            raise ApiError(400, "a part of the multipart/form-data body has no header end")
        disposition = ""
        for line in head.decode("latin-1").split("\r\n"):
            key, _, value = line.partition(":")
            if key.strip().lower() == "content-disposition":
                disposition = value
        name = _NAME.search(disposition)
        if name is None:
            raise ApiError(400, "a part of the multipart/form-data body has no field name")
        filename = _FILENAME.search(disposition)
        parts[name.group(1)] = FormPart(
            name.group(1), filename.group(1) if filename else None, data
        )
    return parts
