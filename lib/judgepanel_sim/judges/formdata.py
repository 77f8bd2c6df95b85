"""Reading a ``multipart/form-data`` body: the one form the files API receives.

The SDK uploads a file as a form with a ``purpose`` field and a ``file`` part; this reads
the fields and files of such a body without a dependency, and rejects what it cannot read
with a 400 that says why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise

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
    # Where each delimiter starts: a part is read by position, so the bytes of an uploaded
    # file (up to 200 MB) are copied once, not once per split.
    starts: list[int] = []
    at = body.find(delimiter)
    while at >= 0:
        starts.append(at)
        at = body.find(delimiter, at + len(delimiter))
    if len(starts) < 2 or not body.startswith(b"--", starts[-1] + len(delimiter)):
        raise ApiError(400, "the multipart/form-data body is not terminated by its boundary")
    parts: dict[str, FormPart] = {}
    for begin, end in pairwise(starts):
        begin += len(delimiter)  # the part lies between this delimiter and the next
        if not body.startswith(b"\r\n", begin) or not body.endswith(b"\r\n", begin, end):
            raise ApiError(400, "a part of the multipart/form-data body is malformed")
        blank = body.find(b"\r\n\r\n", begin + 2, end - 2)
        if blank < 0:
            raise ApiError(400, "a part of the multipart/form-data body has no header end")
        disposition = ""
        for line in body[begin + 2 : blank].decode("latin-1").split("\r\n"):
            key, _, value = line.partition(":")
            if key.strip().lower() == "content-disposition":
                disposition = value
        name = _NAME.search(disposition)
        if name is None:
            raise ApiError(400, "a part of the multipart/form-data body has no field name")
        filename = _FILENAME.search(disposition)
        parts[name.group(1)] = FormPart(
            name.group(1), filename.group(1) if filename else None, body[blank + 4 : end - 2]
        )
    return parts
