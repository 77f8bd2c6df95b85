"""The pre-registered temperature rule (the fusion paper, section 6): its file, grid and verdict.

A rule file (``rubric/prereg/*.yaml``) fixes, before any grid score exists, the family,
the exploratory and confirmatory datasets, the temperature grid, the image subset and two
claims: confident dimensions tolerate high temperature, and an inverted per-dimension
temperature assignment beats the differentiated one. :func:`evaluate_rule` tests both on
one dataset's grid scores and :func:`rule_claims` states them as ledger rows; the verdict
is read on the confirmatory dataset only.

Each registered criterion is a 95% interval's position, which is a one-sided test at
``(1 - confidence) / 2`` (0.025): so are the rows. The first claim is one test per confident
dimension, for a loss (high minus low below zero), each on its own as registered (no
correction over dimensions), and a row counting the dimensions that lose; registered
without an equivalence margin, a count of 0 shows only that no loss was detected. The
second claim is one pre-declared one-sided difference, a family of one.
"""

from __future__ import annotations

import hashlib
import math
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from judgepanel.claims import wording
from judgepanel.claims.rows import Claim, slug
from judgepanel.core.prompts import DIMENSIONS
from judgepanel.errors import JudgepanelError
from judgepanel.stats import paired_bootstrap, spearman
from judgepanel.studies.common.combiners import gb_combiner, oof_predict

GRID_LEVELS: tuple[str, ...] = ("low", "base", "high")


class RuleError(JudgepanelError, ValueError):
    """A rule file is missing a field or holds a value the study cannot use."""


@dataclass(frozen=True)
class TemperatureRule:
    """A pre-registered temperature rule, as its file states it.

    Attributes:
        path: the file.
        sha256: the file's SHA-256 (what the notebook shows as its identity).
        name: the rule's name.
        family: the family it is about (None: the profile's first pre-declared family).
        exploratory, confirmatory: dataset names of the profile.
        temperatures: ``low``, ``base`` and ``high`` sampling temperatures.
        dimension_r: repetitions per dimension and temperature.
        n_images, sample_seed: the stratified subset of each dataset's scored sample.
        confident_rho: the confidence threshold on the base-temperature rho.
        confidence, n_resamples: the intervals of the tests.
        claims: the claims in words, by key.
    """

    path: Path
    sha256: str
    name: str
    family: str | None
    exploratory: str
    confirmatory: str
    temperatures: dict[str, float]
    dimension_r: int
    n_images: int
    sample_seed: int
    confident_rho: float
    confidence: float
    n_resamples: int
    claims: dict[str, str]

    def family_of(self, predeclared: Sequence[str]) -> str:
        """The rule's family, or the first pre-declared family when the rule names none."""
        if self.family is not None:
            return self.family
        if not predeclared:
            raise RuleError(f"{self.path}: the rule names no family and none is pre-declared")
        return str(predeclared[0])

    def grid(self) -> tuple[float, ...]:
        """The temperatures scored, low to high."""
        return tuple(self.temperatures[level] for level in GRID_LEVELS)


def load_rule(path: str | Path) -> TemperatureRule:
    """Read and check a rule file; every problem names the file and the field."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise RuleError(f"{p}: cannot read the rule file ({exc.strerror})") from None
    data = yaml.safe_load(raw) or {}

    def need(key: str):
        if key not in data:
            raise RuleError(f"{p}: missing field {key!r}")
        return data[key]

    temps = need("temperatures")
    missing = [level for level in GRID_LEVELS if level not in (temps or {})]
    if missing:
        raise RuleError(f"{p}: temperatures lacks {missing}")
    temperatures = {level: float(temps[level]) for level in GRID_LEVELS}
    if not temperatures["low"] < temperatures["base"] < temperatures["high"]:
        raise RuleError(f"{p}: temperatures must satisfy low < base < high, got {temperatures}")
    claims = need("claims")
    for key in ("tolerates_high", "inverted_beats_differentiated"):
        if key not in (claims or {}):
            raise RuleError(f"{p}: claims lacks {key!r}")
    return TemperatureRule(
        path=p,
        sha256=hashlib.sha256(raw).hexdigest(),
        name=str(need("name")),
        family=data.get("family"),
        exploratory=str(need("exploratory")),
        confirmatory=str(need("confirmatory")),
        temperatures=temperatures,
        dimension_r=int(need("dimension_r")),
        n_images=int(need("n_images")),
        sample_seed=int(data.get("sample_seed", 0)),
        confident_rho=float(need("confident_rho")),
        confidence=float(data.get("confidence", 0.95)),
        n_resamples=int(data.get("n_resamples", 10_000)),
        claims={k: str(v) for k, v in claims.items()},
    )


def grid_means(
    calls: pd.DataFrame,
    dataset: str,
    *,
    family: str,
    temperatures: Sequence[float],
    rubric_sha: str,
    images: Sequence[str],
) -> dict[float, pd.DataFrame]:
    """Per temperature, the family's dimension means over the repetitions: images x dimensions.

    Only ok dimension calls of this rubric count; an image missing any dimension at any
    temperature is left out of every table, so all arms compare on the same images.
    """
    df = calls[
        (calls["dataset"] == dataset)
        & (calls["family"] == family)
        & (calls["kind"] == "dimension")
        & (calls["rubric_sha"] == rubric_sha)
        & (calls["status"] == "ok")
        & calls["item"].isin(list(images))
    ]
    out: dict[float, pd.DataFrame] = {}
    for t in temperatures:
        sub = df[np.isclose(df["temperature"].astype(float), t)]
        out[float(t)] = sub.pivot_table(
            index="item", columns="dimension", values="value", aggfunc="mean"
        ).reindex(columns=list(DIMENSIONS))
    common = pd.Index(list(images))
    for table in out.values():
        common = common.intersection(table.dropna().index)
    if len(common) < 10:
        raise ValueError(
            f"{dataset}: only {len(common)} images have {family}'s dimension scores at every "
            f"temperature {list(temperatures)}; score the temperature run first"
        )
    return {t: table.loc[common.sort_values()] for t, table in out.items()}


def _assignment(
    grid: Mapping[float, pd.DataFrame], confident: Sequence[str], *, on: float, off: float
) -> pd.DataFrame:
    """Dimension means taken at ``on`` for confident dimensions and ``off`` for the others."""
    cols = {d: grid[on if d in confident else off][d] for d in DIMENSIONS}
    return pd.DataFrame(cols)


def one_sided_alpha(rule: TemperatureRule) -> float:
    """The level of the one-sided test a registered interval criterion amounts to (rounded:
    ``(1 - 0.95) / 2`` is 0.025000000000000022 in floating point)."""
    return round((1.0 - rule.confidence) / 2.0, 12)


@dataclass(frozen=True)
class RuleResult:
    """The rule tested on one dataset.

    Attributes:
        dataset: where it was tested.
        dimensions: per dimension: rho at each temperature, confident, and high minus low
            with its interval and its one-sided p for a loss (``p_loss``).
        assignment: the inverted-minus-differentiated comparison (one row, one-sided p).
        tolerates_high: no confident dimension shows a detectable loss (p_loss below the
            one-sided level and the interval below zero); False without a confident one.
            Not evidence of equal quality: no margin was registered.
        inverted_beats: the second claim's test finds a gain (p below the one-sided level
            and the interval above zero).
    """

    dataset: str
    dimensions: pd.DataFrame
    assignment: pd.DataFrame
    tolerates_high: bool
    inverted_beats: bool


def evaluate_rule(
    grid: Mapping[float, pd.DataFrame],
    y: pd.Series,
    rule: TemperatureRule,
    *,
    dataset: str,
    seed: int = 0,
) -> RuleResult:
    """Test both claims of ``rule`` on one dataset's grid (:func:`grid_means`) and human means."""
    low, base, high = rule.grid()
    items = grid[base].index
    target = y.reindex(items).to_numpy(float)
    rows = []
    for d in DIMENSIONS:
        rho = {t: spearman(target, grid[t][d].to_numpy(float)) for t in (low, base, high)}
        row = {
            "dataset": dataset,
            "dimension": d,
            "rho_low": rho[low],
            "rho_base": rho[base],
            "rho_high": rho[high],
            "confident": rho[base] > rule.confident_rho,
        }
        res = paired_bootstrap(
            target,
            grid[high][d].to_numpy(float),
            grid[low][d].to_numpy(float),
            "spearman",
            n_resamples=rule.n_resamples,
            seed=seed,
            confidence=rule.confidence,
            alternative="less",
        )
        row.update(delta=res.delta, ci_low=res.ci_low, ci_high=res.ci_high, p_loss=res.p)
        rows.append(row)
    dims = pd.DataFrame(rows)
    confident = dims.loc[dims["confident"], "dimension"].tolist()
    yy = y.reindex(items)
    arms = {
        "inverted": _assignment(grid, confident, on=low, off=high),
        "differentiated": _assignment(grid, confident, on=high, off=low),
    }
    preds = {k: oof_predict(gb_combiner(), X, yy) for k, X in arms.items()}
    res = paired_bootstrap(
        target,
        preds["inverted"],
        preds["differentiated"],
        "spearman",
        n_resamples=rule.n_resamples,
        seed=seed,
        confidence=rule.confidence,
        alternative="greater",
    )
    assignment = pd.DataFrame(
        [
            {
                "dataset": dataset,
                "confident": ", ".join(confident) or "none",
                **res.as_row(),
            }
        ]
    )
    alpha = one_sided_alpha(rule)
    mine = dims[dims["confident"]]
    loses = (mine["p_loss"] < alpha) & (mine["ci_high"] < 0)
    gain = bool(res.p < alpha and res.ci_low > 0)
    return RuleResult(dataset, dims, assignment, bool(confident) and not loses.any(), gain)


@dataclass(frozen=True)
class RuleClaims:
    """The rule's claims on one dataset as ledger rows.

    Attributes:
        dimensions: one row per confident dimension, high minus low, one-sided for a loss.
        tolerates: the first claim: the count of ``dimensions`` where high temperature
            falls below low, or, with no confident dimension, a row kept out of every test.
        inverted: the second claim, inverted minus differentiated, one-sided for a gain.
    """

    dimensions: list[Claim]
    tolerates: Claim
    inverted: Claim


def rule_claims(result: RuleResult, rule: TemperatureRule, *, family: str, role: str) -> RuleClaims:
    """The rule's two claims on ``result``'s dataset as ledger rows (``role``:
    ``confirmatory`` or ``exploratory``), each a test of its own as registered."""
    alpha = one_sided_alpha(rule)
    t = rule.temperatures
    ds = result.dataset
    high, low = f"high temperature ({t['high']:.1f})", f"low temperature ({t['low']:.1f})"
    conf = result.dimensions[result.dimensions["confident"]]
    dims = [
        Claim(
            id=f"high-vs-low-{slug(ds)}-{slug(r.dimension)}",
            a=high,
            b=low,
            dataset=ds,
            scope=f"{family}'s {r.dimension} dimension mean ({role}; confident: base ρ "
            f"{wording.number(r.rho_base)} > {rule.confident_rho:g})",
            metric="spearman",
            unit="images",
            estimate=float(r.delta),
            ci_low=float(r.ci_low),
            ci_high=float(r.ci_high),
            p=float(r.p_loss),
            alternative="less",
            alpha=alpha,
            level=rule.confidence,
            symbol="Δρ",
            note="the rule's first claim on one confident dimension: registered as its "
            f"{rule.confidence:.0%} interval reaching zero, a one-sided test for a loss at "
            f"{alpha:g}, on its own (no correction over dimensions, as registered)",
        )
        for r in conf.itertuples()
    ]
    claim = "the rule's first claim, tolerates_high"
    what = f"confident dimensions of {ds} on which {high} falls below {low}"
    over = "the registered test of each confident dimension (each a family of one, as registered)"
    if dims:
        loses = sum(c.verdict == wording.FALLS_BELOW for c in dims)
        point = sum(c.estimate < 0 for c in dims)
        tolerates = Claim(
            id=f"tolerates-high-{slug(ds)}", a=what, b=over, dataset=ds,
            scope=f"{claim} ({role})", metric="spearman", unit="images",
            estimate=float(loses), ci_low=math.nan, ci_high=math.nan, kind="count",
            alpha=alpha, extra={"n": len(dims), "point": point},
            note="registered without an equivalence margin: a count of 0 shows only that "
            "no loss was detected, not that high temperature is as good as low",
        )  # fmt: skip
    else:
        tolerates = Claim(
            id=f"tolerates-high-{slug(ds)}", a=high, b=low, dataset=ds,
            scope=f"{claim} ({role})", metric="spearman", unit="images",
            estimate=math.nan, ci_low=math.nan, ci_high=math.nan, alpha=alpha,
            alternative="less",
            excluded=f"no dimension is confident on {ds} (base-temperature ρ above "
            f"{rule.confident_rho:g}): the claim has nothing to test",
        )  # fmt: skip
    row = result.assignment.iloc[0]
    inverted = Claim(
        id=f"inverted-vs-differentiated-{slug(ds)}",
        a="the inverted assignment (low temperature on the confident dimensions, high on the "
        "others)",
        b="the differentiated one (the reverse)",
        dataset=ds,
        scope=f"{family}'s five dimension means, out-of-fold gradient boosting ({role}; "
        f"confident: {row['confident']})",
        metric="spearman",
        unit="images",
        estimate=float(row["delta"]),
        ci_low=float(row["ci_low"]),
        ci_high=float(row["ci_high"]),
        p=float(row["p"]),
        alternative="greater",
        alpha=alpha,
        level=rule.confidence,
        symbol="Δρ",
        note="the rule's second claim, pre-declared (a family of one): registered as its "
        f"{rule.confidence:.0%} interval above zero, a one-sided test for a gain at {alpha:g}",
    )
    return RuleClaims(dims, tolerates, inverted)


def verdicts(
    claims: Mapping[str, RuleClaims],
    roles: Mapping[str, str],
    ids: Callable[[Claim], str] = lambda c: c.id,
) -> pd.DataFrame:
    """One row per dataset and registered claim: its role, the claim's key, the verdict of
    its ledger row and the row's id (``ids``: the id a page recorded it under)."""
    rows = []
    for ds, c in claims.items():
        for key, row in (("tolerates_high", c.tolerates), ("inverted_beats_differentiated",
                                                           c.inverted)):  # fmt: skip
            rows.append({"dataset": ds, "role": roles[ds], "registered_claim": key,
                         "verdict": row.verdict, "claim": ids(row)})  # fmt: skip
    return pd.DataFrame(rows)


def rule_row(rule: TemperatureRule) -> dict[str, object]:
    """The rule's identity and design, one row for the provenance table."""
    out = asdict(rule)
    out.pop("claims")
    out["path"] = rule.path.name
    out["family"] = rule.family or "the first pre-declared family"
    out["temperatures"] = ", ".join(f"{k} {v}" for k, v in rule.temperatures.items())
    return out


def committed_at(path: str | Path) -> str | None:
    """When the rule file was first committed (ISO 8601), or None outside a git checkout.

    The first commit that added the file is the evidence that the rule predates the scores;
    later commits would only show that it was touched.
    """
    p = Path(path).resolve()
    try:
        out = subprocess.run(
            ["git", "log", "--diff-filter=A", "--format=%cI", "--", p.name],
            cwd=p.parent,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    lines = out.stdout.split()
    return lines[-1] if out.returncode == 0 and lines else None


def first_grid_score(calls: pd.DataFrame, rule: TemperatureRule, family: str) -> str | None:
    """When the store recorded its first call of the grid outside the base temperature."""
    extra = [rule.temperatures["low"], rule.temperatures["high"]]
    sub = calls[
        calls["dataset"].isin([rule.exploratory, rule.confirmatory])
        & (calls["family"] == family)
        & (calls["kind"] == "dimension")
        & calls["temperature"].astype(float).round(6).isin([round(t, 6) for t in extra])
    ]
    return None if sub.empty else str(sub["created_at"].min())
