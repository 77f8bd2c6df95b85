"""The recipe's cheaper design: may one logprob call per prompt replace the sampled runs?

For each dataset whose logprob calls the run names, both options of the recipe (the best
single model, the pre-declared panel) are compared on expected scores against their
sampled design (:func:`logprob_fused.cheaper_design`); a dataset without such calls, or
whose calls cannot be compared yet, gets a note that says so instead of a row.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import pandas as pd

from judgepanel.core.config import Price, ScoringDesign
from judgepanel.studies.fusion import logprob_designs as lpd
from judgepanel.studies.fusion import logprob_fused as lpf

LOGPROB_KINDS = ("holistic_logprob", "dimension_logprob")
"""The call kinds a logprob run adds to the sampled calls."""


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
        lpd.design_scores(single, k, design.temperature), y, n_resamples=n_resamples, seed=seed
    )
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


def headlines(table: pd.DataFrame) -> list[tuple[str, str, str]]:
    """Each option's headline: its key (``recipe_logprob_<dataset>_panel|single``), its
    value (``offered`` or ``not offered``) and its sentence."""
    return [
        (
            f"recipe_logprob_{r.dataset}_{'panel' if 'panel' in r.option else 'single'}",
            "offered" if r.offered else "not offered",
            f"{r.dataset}, {r.text}",
        )
        for r in table.itertuples()
    ]


def describe_cheaper(table: pd.DataFrame, notes: Sequence[str]) -> str:
    """Each option's verdict, then each note."""
    return " ".join(
        [f"{r.dataset}, {r.text}." for r in table.itertuples()] + [f"{n}." for n in notes]
    )
