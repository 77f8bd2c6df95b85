"""The simulator's multipart reader: what httpx (the SDK's transport) uploads is read back
byte for byte, and a body it cannot read gets a 400 that says why."""

from __future__ import annotations

import httpx
import pytest

from judgepanel_sim.judges.formdata import parse_form
from judgepanel_sim.judges.protocol import ApiError


def _upload(data: bytes) -> tuple[str, bytes]:
    """The content type and body httpx sends for a batch file upload."""
    request = httpx.Request(
        "POST",
        "http://sim/v1/files",
        data={"purpose": "batch"},
        files={"file": ("in.jsonl", data, "application/jsonl")},
    )
    return request.headers["content-type"], request.read()


@pytest.mark.parametrize(
    "data", [b"", b'{"a": 1}\n', b"\r\n--x\r\n\r\n" * 3, bytes(range(256)) * 40]
)
def test_an_upload_is_read_back_exactly(data: bytes) -> None:
    content_type, body = _upload(data)
    form = parse_form(content_type, body)
    assert form["purpose"].data == b"batch" and form["purpose"].filename is None
    assert form["file"].filename == "in.jsonl" and form["file"].data == data


@pytest.mark.parametrize(
    ("cut", "why"),
    [
        (lambda ct, b: ("application/json", b), "expected a multipart/form-data upload"),
        (lambda ct, b: ("multipart/form-data", b), "names no boundary"),
        (lambda ct, b: (ct, b[: b.rindex(b"--")]), "not terminated by its boundary"),
        (lambda ct, b: (ct, b.replace(b"\r\n\r\n", b"\r\n", 1)), "has no header end"),
        (lambda ct, b: (ct, b.replace(b"\r\n", b"", 1)), "is malformed"),
        (lambda ct, b: (ct, b.replace(b'name="purpose"', b"", 1)), "has no field name"),
    ],
)
def test_a_body_it_cannot_read_is_refused_with_the_reason(cut, why: str) -> None:
    content_type, body = cut(*_upload(b'{"a": 1}\n'))
    with pytest.raises(ApiError, match=why) as refused:
        parse_form(content_type, body)
    assert refused.value.status == 400
