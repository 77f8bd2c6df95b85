"""The simulated provider's own price list, in USD per million tokens.

The server prices what it bills from this table (or from a ``--prices`` file that replaces
it), never from the project's runs file, so that a client's own cost accounting can be
checked against an independent count. Cached prompt tokens are priced at ``cached_input``;
a line of a batch is billed ``batch_share`` of the online price (half, as most providers
sell their batch APIs).
A model the table does not list has no price: its cost is ``None`` (``null`` in the ledger
and in ``usage.cost``), rather than a made-up zero.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from judgepanel_sim.judges.protocol import ACCEPTED_MODELS


@dataclass(frozen=True)
class Price:
    """USD per million tokens: fresh input, cached input, output; and the share of that
    price a batch line is billed."""

    input: float
    cached_input: float
    output: float
    batch_share: float = 0.5

    def cost(self, prompt_tokens: int, cached_tokens: int, completion_tokens: int) -> float:
        """Dollars of one answer (cached tokens are part of ``prompt_tokens``)."""
        fresh = prompt_tokens - cached_tokens
        return (
            fresh * self.input + cached_tokens * self.cached_input + completion_tokens * self.output
        ) / 1e6


PriceTable = Mapping[str, Price]

DEFAULT_PRICES: dict[str, Price] = {
    "sim-aurora-v1": Price(0.30, 0.075, 2.50),
    "sim-basalt-v1": Price(0.20, 0.05, 0.60),
    "sim-cobalt-v1": Price(0.10, 0.025, 0.30),
    "sim-dune-v1": Price(0.10, 0.025, 0.20),
    "sim-ember-v1": Price(0.25, 0.0625, 1.00),
    "router/sim-aurora-v1": Price(0.30, 0.075, 2.50),
}
"""The default table: every model the server answers for."""


def cost(
    table: PriceTable, model: str, prompt_tokens: int, cached_tokens: int, completion_tokens: int
) -> float | None:
    """Dollars of one answer of ``model``, or ``None`` when the table has no price for it."""
    price = table.get(model)
    if price is None:
        return None
    return price.cost(prompt_tokens, cached_tokens, completion_tokens)


def batch_cost(
    table: PriceTable, model: str, prompt_tokens: int, cached_tokens: int, completion_tokens: int
) -> float | None:
    """Dollars of one answer of ``model`` sent in a batch (``None`` without a price)."""
    price = table.get(model)
    if price is None:
        return None
    return price.cost(prompt_tokens, cached_tokens, completion_tokens) * price.batch_share


def _rate(path: Path, model: str, entry: Mapping[str, object], name: str) -> float:
    value = entry[name]
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{path}: model {model!r}: {name} must be a number, got {value!r}")
    if value < 0:
        raise ValueError(f"{path}: model {model!r}: {name} must be >= 0, got {value}")
    return float(value)


def load_prices(path: Path) -> dict[str, Price]:
    """A price table from a JSON or YAML file ``{model: {input:, cached_input:, output:,
    batch_share:}}``.

    ``cached_input`` defaults to ``input``, ``batch_share`` to one half. The file replaces
    the default table.

    Raises:
        ValueError: naming the file (and the model) for an unreadable file or a bad entry.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the price file ({exc.strerror})") from None
    try:
        data = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise ValueError(f"{path}: not valid JSON or YAML ({exc})") from None
    if not isinstance(data, dict) or not data:
        raise ValueError(f"{path}: expected a mapping of model id to prices")
    table: dict[str, Price] = {}
    for model, entry in data.items():
        if model not in ACCEPTED_MODELS:
            known = ", ".join(ACCEPTED_MODELS)
            raise ValueError(f"{path}: model {model!r} is not served here; known: {known}")
        if not isinstance(entry, dict):
            raise ValueError(f"{path}: model {model!r}: expected {{input:, output:}}")
        unknown = sorted(set(entry) - {"input", "cached_input", "output", "batch_share"})
        if unknown:
            raise ValueError(f"{path}: model {model!r}: unknown keys {unknown}")
        missing = sorted({"input", "output"} - set(entry))
        if missing:
            raise ValueError(f"{path}: model {model!r}: missing {missing}")
        fresh = _rate(path, model, entry, "input")
        cached = _rate(path, model, entry, "cached_input") if "cached_input" in entry else fresh
        share = _rate(path, model, entry, "batch_share") if "batch_share" in entry else 0.5
        if share > 1:
            raise ValueError(f"{path}: model {model!r}: batch_share must be <= 1, got {share}")
        table[model] = Price(fresh, cached, _rate(path, model, entry, "output"), share)
    return table
