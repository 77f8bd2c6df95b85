"""The simulated judges called in-process: the server's answers without HTTP.

The calibration study scores thousands of images once per knob setting. Sending each call
through the loopback server would cost minutes of protocol work per setting for answers
that are fixed by the request and the seed. Here a planned call (`CallSpec`, from the
study's own planner) is turned into the request body the client sends, parsed by the
server's own parser and answered by `server.answer_chat`, the function the server calls;
the answer is read by the client's own parser. ``tests/test_inprocess.py`` checks that the
scores equal what the server returns for the same requests.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

import pandas as pd

from judgepanel.core.calls import AnswerError, CallSpec
from judgepanel_sim.judges.families import FAMILIES, Family, family_for_model
from judgepanel_sim.judges.protocol import parse_chat, truncate_answer
from judgepanel_sim.judges.server import answer_chat


def request_body(spec: CallSpec) -> dict[str, Any]:
    """The body the client posts for ``spec`` (model, messages, temperature, cap, seed)."""
    body: dict[str, Any] = {
        "model": spec.key.model,
        "messages": spec.build(),
        "temperature": spec.key.temperature,
        "max_tokens": spec.max_tokens,
    }
    if spec.seed is not None:
        body["seed"] = spec.seed
    return body


def families_with(shared_error: float | None) -> dict[str, Family]:
    """The families by model id, as copies with another share of common error if given."""
    out = {}
    for fam in FAMILIES.values():
        out[fam.model_id] = fam if shared_error is None else replace(fam, shared_error=shared_error)
    return out


def answer_text(spec: CallSpec, *, server_seed: int = 0, family: Family | None = None) -> str:
    """The answer the simulated server (seed ``server_seed``, no faults) gives to ``spec``."""
    body = request_body(spec)
    chat = parse_chat(body)
    fam = family if family is not None else family_for_model(chat.model)
    text = answer_chat(chat, server_seed, family=fam)
    content, _, _ = truncate_answer(text, chat.max_tokens)
    return content


def score_specs(
    specs: Iterable[CallSpec],
    *,
    server_seed: int = 0,
    shared_error: float | None = None,
) -> pd.DataFrame:
    """Answer and parse every call in-process: the tidy scores the store would hold.

    Args:
        specs: planned calls (e.g. ``judgepanel.studies.common.rubric_plan.plan_images``).
        server_seed: the simulated server's seed.
        shared_error: the families' share of common error (None: the simulator's own).

    Returns:
        One row per call: ``item``, ``family``, ``kind``, ``dimension``, ``repetition``,
        ``value`` (NaN where the answer could not be read, as the store records a failure).
    """
    by_model: Mapping[str, Family] = families_with(shared_error)
    rows = []
    for spec in specs:
        key = spec.key
        text = answer_text(spec, server_seed=server_seed, family=by_model[key.model])
        try:
            value = float(spec.parse(text)["score"])
        except AnswerError:
            value = float("nan")
        rows.append((key.item, key.family, key.call_type, key.dimension, key.repetition, value))
    return pd.DataFrame(
        rows, columns=["item", "family", "kind", "dimension", "repetition", "value"]
    )
