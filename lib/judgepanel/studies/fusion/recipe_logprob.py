"""The recipe's cheaper design: may one logprob call per prompt replace the sampled runs?

For each dataset whose logprob calls the run names, both options of the recipe (the best
single model, the pre-declared panel) are compared on expected scores against their
sampled design (:func:`logprob_fused.cheaper_design`); a dataset without such calls, or
whose calls cannot be compared yet, gets a note that says so instead of a row.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from judgepanel.claims.rows import Claim, slug
from judgepanel.core.config import Price, ScoringDesign
from judgepanel.studies.fusion import logprob_designs as lpd
from judgepanel.studies.fusion import logprob_fused as lpf


def cheaper_options(
    calls: pd.DataFrame,
    y: pd.Series,
    design: ScoringDesign,
    *,
    best_family: str,
    predeclared: Sequence[str],
    margin: float,
    n_resamples: int,
    seed: int,
    price: Callable[[str], Price],
    n_jobs: int | None = None,
) -> list[lpf.CheaperDesign]:
    """The best single model and the pre-declared panel, each on expected scores against
    its sampled design (mean of k; k holistic and R per dimension).

    Args:
        calls: the dataset's sampled calls and its logprob calls together.
        y: the human mean of the images.
        design: the dataset's scoring design (k, R, temperature).
        price: the profile's price table; every design is priced at its online list
            price (``logprob_designs.PRICE_BASIS``), the basis of the recipe's options.

    Raises:
        ValueError: the calls cannot give one of the designs compared.
    """
    k, r = design.holistic_k, design.dimension_r
    single = calls[calls["family"] == best_family]
    acc = lpd.design_accuracy(
        lpd.design_scores(single, k, design.temperature), y, n_resamples=n_resamples, seed=seed,
        margin=margin, metrics=(lpf.CHEAPER_METRIC,),
    )  # fmt: skip
    acc = acc.merge(
        lpd.design_costs(single, acc, price), on=["family", "design", "calls_per_image"]
    )
    options = [
        lpf.cheaper_design(
            acc, option=f"best single ({best_family})", sampled=lpd.mean_of(k), margin=margin
        )
    ]
    fused = lpf.fused_designs(
        calls, y, predeclared, k_max=k, dimension_r=r, temperature=design.temperature,
        n_jobs=n_jobs,
    )  # fmt: skip
    acc_f = lpf.fused_accuracy(
        fused,
        calls,
        predeclared,
        dimension_r=r,
        n_resamples=n_resamples,
        seed=seed,
        price=price,
        margin=margin,
        metrics=(lpf.CHEAPER_METRIC,),
    )
    options.append(
        lpf.cheaper_design(
            acc_f, option="pre-declared panel", sampled=lpf.per_prompt(k, r), margin=margin
        )
    )
    return options


def cheaper_table(
    datasets: Sequence[str],
    logprob_datasets: Mapping[str, str],
    logprob_calls: Mapping[str, pd.DataFrame],
    *,
    y: Mapping[str, pd.Series],
    designs: Mapping[str, ScoringDesign],
    best: Mapping[str, str],
    predeclared: Sequence[str],
    margin: float,
    n_resamples: int,
    seed: int,
    price: Callable[[str], Price],
    n_jobs: int | None = None,
) -> tuple[pd.DataFrame, list[str]]:
    """:func:`cheaper_options` of every dataset that has logprob calls, and notes for the rest.

    Args:
        datasets: the run's datasets, in order.
        logprob_datasets: the logprob run named for each dataset (the runs file's).
        logprob_calls: per dataset with a logprob run, its sampled and logprob calls.
        y, designs, best: per dataset, the human mean, the scoring design and the best
            probe family.

    Returns:
        One row per (dataset, option) with ``dataset``, ``logprob_dataset`` and
        :meth:`CheaperDesign.as_row`; and one note per dataset without a row.
    """
    rows, notes = [], []
    for name in datasets:
        lp = logprob_datasets.get(name)
        if lp is None:
            notes.append(f"{name}: no logprob run is named, so only the sampled design is costed")
            continue
        try:
            options = cheaper_options(
                logprob_calls[name], y[name], designs[name], best_family=best[name],
                predeclared=predeclared, margin=margin, n_resamples=n_resamples, seed=seed,
                price=price, n_jobs=n_jobs,
            )  # fmt: skip
        except ValueError as exc:
            notes.append(f"{name}: the logprob run {lp!r} cannot be compared yet ({exc})")
            continue
        rows += [{"dataset": name, "logprob_dataset": lp, **o.as_row()} for o in options]
    return pd.DataFrame(rows), notes


def option_key(option: str) -> str:
    """``panel`` or ``single``: how ids and headline keys name an option."""
    return "panel" if "panel" in option else "single"


def claim_id(dataset: str, option: str) -> str:
    """The ledger id of one option's non-inferiority row."""
    return f"logprob-noninferior:{slug(dataset)}:{option_key(option)}"


def _design(r: Any) -> lpf.CheaperDesign:
    """A row of :func:`cheaper_table` as its :class:`~logprob_fused.CheaperDesign`."""
    return lpf.CheaperDesign(
        option=str(r.option), sampled=str(r.sampled_design), delta=float(r.delta),
        low=float(r.ci_low), high=float(r.ci_high), margin=float(r.margin),
        sampled_usd=float(r.sampled_usd_per_1000), expected_usd=float(r.expected_usd_per_1000),
        sampled_calls=int(r.sampled_calls_per_image),
        expected_calls=int(r.expected_calls_per_image), p=float(r.p),
    )  # fmt: skip


def claims(table: pd.DataFrame) -> list[Claim]:
    """One non-inferiority row per row of :func:`cheaper_table`, in its order: each a
    pre-declared hypothesis with the runs file's margin (a family of one, its p decides),
    priced on :data:`~judgepanel.studies.fusion.logprob_designs.PRICE_BASIS`."""
    return [
        _design(r).claim(
            str(r.dataset),
            claim_id(str(r.dataset), str(r.option)),
            note=f"logprob calls of {r.logprob_dataset}; dollars at the {lpd.PRICE_BASIS}",
        )
        for r in table.itertuples()
    ]


def headlines(table: pd.DataFrame) -> list[tuple[str, str, str, str]]:
    """Each option's headline: its key (``recipe_logprob_<dataset>_panel|single``), its
    value (``offered`` or ``not offered``), its lead-in and the id of the row it quotes."""
    return [
        (
            f"recipe_logprob_{r.dataset}_{option_key(str(r.option))}",
            "offered" if r.offered else "not offered",
            f"{r.dataset}, {r.option}: ",
            claim_id(str(r.dataset), str(r.option)),
        )
        for r in table.itertuples()
    ]


def describe_cheaper(
    table: pd.DataFrame,
    notes: Sequence[str],
    *,
    quote: Callable[[str], str],
    cite: Callable[[str, str, str], str] | None = None,
) -> str:
    """Each option's non-inferiority row (``quote`` states it by id) and the recipe's
    decision, with a link to 09's two-sided difference row of the same designs (``cite``:
    by logprob dataset, claim id and text), then each note."""
    out = []
    for r in table.itertuples():
        d = _design(r)
        row = quote(claim_id(str(r.dataset), str(r.option)))
        text = f"{r.dataset}, {r.option}: {row}; {d.decision}"
        if cite is not None:
            scope = "fused" if option_key(str(r.option)) == "panel" else _family(str(r.option))
            ref = cite(
                str(r.logprob_dataset),
                lpf.versus_claim_id(str(r.sampled_design), scope),
                "09 tests the two-sided difference of these designs on its own images",
            )
            text += f" ({ref})"
        out.append(text + ".")
    return " ".join(out + [f"{n}." for n in notes])


def _family(option: str) -> str:
    """The family of a ``best single (<family>)`` option."""
    return option.split("(", 1)[-1].rstrip(")")
