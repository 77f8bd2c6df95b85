"""The pre-registered temperature rule (seed 000, section 6): its file, its grid, its verdict.

A rule file (``rubric/prereg/*.yaml``) fixes, before any grid score exists, the family,
the exploratory and confirmatory datasets, the temperature grid, the image subset and two
claims: confident dimensions tolerate high temperature, and an inverted per-dimension
temperature assignment beats the differentiated one. :func:`evaluate_rule` tests both on
one dataset's grid scores; the verdict is read on the confirmatory dataset only.
"""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from judgepanel.core.errors import JudgepanelError
from judgepanel.core.prompts import DIMENSIONS
from judgepanel.stats import paired_bootstrap, spearman, wording
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


@dataclass(frozen=True)
class RuleResult:
    """The rule tested on one dataset.

    Attributes:
        dataset: where it was tested.
        dimensions: per dimension: rho at each temperature, confident, and for confident
            ones the high-minus-low difference with its interval and whether it tolerates.
        assignment: the inverted-minus-differentiated comparison (one row).
        tolerates_high: the first claim's registered criterion was met (no confident
            dimension lost detectably; not evidence of equal quality).
        inverted_beats: the second claim's interval lies above zero.
    """

    dataset: str
    dimensions: pd.DataFrame
    assignment: pd.DataFrame
    tolerates_high: bool
    inverted_beats: bool

    def verdicts(self) -> pd.DataFrame:
        """The two claims and their verdicts, in words that claim no more than the test.

        The first claim's registered criterion is a non-rejection (every confident
        dimension's interval of high minus low reaches zero or above), with no equivalence
        margin: met, it is ``no loss detected``, never "no worse", and the evidence gives the
        largest loss the intervals still allow. Some interval wholly below zero: ``failed``;
        no confident dimension: ``not testable``. The second claim is a superiority test:
        ``supported`` when its interval lies above zero, else ``not supported``.
        """
        confident = self.dimensions[self.dimensions["confident"]]
        if confident.empty:
            first, evidence = "not testable", "no confident dimension"
        else:
            clear = int(confident["tolerates"].sum())
            first = "no loss detected" if self.tolerates_high else "failed"
            evidence = (
                f"{clear} of {len(confident)} confident dimensions show no detectable loss; "
                f"the intervals allow losses down to "
                f"{wording.number(float(confident['ci_low'].min()), signed=True)}"
            )
        row = self.assignment.iloc[0]
        return pd.DataFrame(
            [
                {
                    "dataset": self.dataset,
                    "claim": "tolerates_high",
                    "verdict": first,
                    "evidence": evidence,
                },
                {
                    "dataset": self.dataset,
                    "claim": "inverted_beats_differentiated",
                    "verdict": "supported" if self.inverted_beats else "not supported",
                    "evidence": "inverted minus differentiated "
                    + wording.estimate(row["delta"], row["ci_low"], row["ci_high"]),
                },
            ]
        )


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
            alternative="two-sided",
        )
        row.update(delta=res.delta, ci_low=res.ci_low, ci_high=res.ci_high, p=res.p)
        row["tolerates"] = bool(res.ci_high >= 0) if row["confident"] else np.nan
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
    tolerates = bool(confident) and bool(dims.loc[dims["confident"], "tolerates"].all())
    return RuleResult(dataset, dims, assignment, tolerates, bool(res.ci_low > 0))


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
