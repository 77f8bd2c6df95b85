"""The claims ledger: one row, and one verdict, for each comparison the report states.

A page that says "A beats B" takes those words from a :class:`Claim`, computed once by the
study that owns the comparison. Every page that mentions the comparison quotes the same
row by its id, so two pages cannot word it differently, and the report writes every row
to ``claims.csv`` for a reader to check.

The rules (README, "Wording conventions"), in :attr:`Claim.verdict`:

* a direction ("beats", "falls below") needs a test in that direction whose decisive p
  (the q of the row's correction family; a row alone in its family is corrected over
  itself) is below the family's alpha, *and* an interval on the same side of zero. An
  interval alone never decides: a row without a p is "no detectable difference" whatever
  its interval, and a one-sided row that finds nothing is "no detectable gain" (or
  "no detectable loss"): it did not look at the other side.
* "equivalent" needs a margin stated before the comparison, with the whole interval inside.
* a row equal by construction to another (a ranker's pass^3 and its ap@1) is kept out of
  every family and says so; its verdict is "not tested".

Families are declared before any result (:class:`Family`, in a notebook's parameters); a
claim that names a family nobody declared is refused.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from judgepanel.claims import wording

NOT_TESTED = "not tested"
PASSES = "passes"
DOES_NOT_PASS = "does not pass"
LEADS = "leads"
HIGHEST_ONLY = "highest by point estimate only"
VERDICTS = (
    wording.BEATS,
    wording.FALLS_BELOW,
    wording.NO_DIFFERENCE,
    wording.NO_GAIN,
    wording.NO_LOSS,
    wording.EQUIVALENT,
    wording.NOT_ESTIMABLE,
    NOT_TESTED,
    PASSES,
    DOES_NOT_PASS,
    LEADS,
    HIGHEST_ONLY,
)
"""The fixed verdicts; a non-inferiority row's ("not worse by more than 0.02", "a loss of
0.02 not ruled out") and a count's ("3 of 8 with q < 0.05") carry their number."""
KINDS = ("difference", "non-inferiority", "alt-test", "count", "best-of")
"""What test a row states, each worded by its kind (:attr:`Claim.verdict`):

* ``difference``: a paired difference, two-sided (beats / falls below / no detectable
  difference) or one-sided (beats / no detectable gain, falls below / no detectable loss);
* ``non-inferiority``: a one-sided test of ``a − b > −margin``, the margin stated before the
  result: not worse by more than the margin / a loss of the margin not ruled out;
* ``alt-test``: the alternative annotator test: passes / does not pass;
* ``count``: how many rows of a family have q below its alpha ("k of n with q < 0.05");
* ``best-of``: the leader of several, by a selection-adjusted (max-statistic) test: leads
  / highest by point estimate only (/ no detectable gain, where the one picked is not even
  ahead of the comparator by its estimate)."""
ALTERNATIVES = ("two-sided", "greater", "less")
SYMBOLS = {"spearman": "Δρ", "kendall_b": "Δτ_b"}
"""How a sentence names a difference of each rank metric."""
_ID = re.compile(r"^[a-z0-9][a-z0-9_.:+-]*$")


@dataclass(frozen=True)
class Family:
    """A correction family, declared before any result is computed.

    Attributes:
        name: its key, quoted by the claims corrected over it (``"ablation/pre-declared"``).
        description: what it corrects over, in words for the glossary.
        alpha: the level its q-values are read at.
        method: the correction, a ``statsmodels`` name (``fdr_bh``, ``fdr_by``, ``holm``).
    """

    name: str
    description: str
    alpha: float = 0.05
    method: str = "fdr_bh"

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise ValueError(f"family {self.name!r}: alpha {self.alpha} is not in (0, 1)")


@dataclass(frozen=True)
class Claim:
    """One comparison as the report states it: what is compared, how, and the verdict.

    Attributes:
        id: stable within its run (``"primary"``, ``"h+p_gb-vs-panel_mean"``); the report
            prefixes the run and notebook, so the full id is unique.
        a, b: the two sides as a reader knows them (``a − b`` is estimated).
        dataset: the data the comparison is on.
        scope: within what the sides are taken, when the names alone do not say (the
            families of a block: ``pre-declared: aurora, basalt, cobalt``).
        metric: what is differenced (``spearman``, ``accuracy``).
        unit: what the bootstrap resamples (``images``, ``papers``, ``tasks``).
        estimate, ci_low, ci_high: ``a − b`` and its interval.
        p: the test's p, in the direction ``alternative``; NaN when not tested.
        q: the p corrected over ``family``; NaN for a family of one (``p`` decides).
        alternative: the direction the test looked in.
        family: the declared family it was corrected in ("" for none: a family of one).
        alpha: the level the decision is read at.
        margin: an equivalence margin, or a non-inferiority margin, stated before the
            comparison (in the estimate's units).
        kind: the test the row states (:data:`KINDS`), which fixes its verdict words.
        level: the interval's coverage (0.95 for a 95% interval).
        excluded: why the row is kept out of every family (equal by construction).
        symbol: how a sentence names the difference (``Δρ``).
        in_points: a difference of proportions, written in percentage points.
        role: ``headline`` for the comparison a page leads with, else "".
        spread_n, spread_mean, spread_p05, spread_p95: where the estimate rests on one fixed
            choice (the fold partition of the out-of-fold fits), the same difference over
            ``spread_n`` random choices: its mean and 5th and 95th percentiles. The
            estimate, interval and verdict stay the fixed choice's; 0 means no spread.
        note: what a reader needs beside the numbers (the fold partition, the price basis).
        page, anchor: where it is shown (``run/notebook`` and a table or figure name); set
            by the page that records it.
    """

    id: str
    a: str
    b: str
    dataset: str
    metric: str
    unit: str
    estimate: float
    ci_low: float
    ci_high: float
    scope: str = ""
    p: float = math.nan
    q: float = math.nan
    alternative: str = "two-sided"
    family: str = ""
    alpha: float = 0.05
    margin: float | None = None
    kind: str = "difference"
    level: float = 0.95
    excluded: str = ""
    symbol: str = "Δ"
    in_points: bool = False
    role: str = ""
    spread_n: int = 0
    spread_mean: float = math.nan
    spread_p05: float = math.nan
    spread_p95: float = math.nan
    note: str = ""
    page: str = ""
    anchor: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        if not _ID.match(self.id):
            raise ValueError(
                f"claim id {self.id!r}: use lower-case letters, digits and . _ : + - only"
            )
        if self.alternative not in ALTERNATIVES:
            raise ValueError(f"claim {self.id!r}: unknown alternative {self.alternative!r}")
        if self.excluded and self.family:
            raise ValueError(
                f"claim {self.id!r} is excluded ({self.excluded}) but names family {self.family!r}"
            )
        if self.kind not in KINDS:
            raise ValueError(f"claim {self.id!r}: unknown kind {self.kind!r} (one of {KINDS})")
        if self.kind == "non-inferiority" and not (self.margin and self.margin > 0):
            raise ValueError(f"claim {self.id!r}: a non-inferiority row needs a margin > 0")
        if self.kind in ("non-inferiority", "alt-test") and self.alternative != "greater":
            raise ValueError(f"claim {self.id!r}: a {self.kind} row tests one side, 'greater'")
        if not 0 < self.level < 1:
            raise ValueError(f"claim {self.id!r}: interval level {self.level} is not in (0, 1)")

    @classmethod
    def of_row(cls, row: Any, **fields: Any) -> Claim:
        """A claim from a row of a comparison table (``delta``, ``ci_low``, ``ci_high``, ``p``
        and ``q``, the columns every comparison table here has); ``fields`` name the rest.
        The symbol follows the metric unless given."""
        fields.setdefault("symbol", SYMBOLS.get(str(fields.get("metric")), "Δ"))
        return cls(
            estimate=float(row["delta"]),
            ci_low=float(row["ci_low"]),
            ci_high=float(row["ci_high"]),
            p=float(row["p"]),
            q=float(row["q"]),
            **fields,
        )

    @property
    def decisive_p(self) -> float:
        """The q of the row's family, or its p when it is alone in its family."""
        return self.q if self.family and not math.isnan(self.q) else self.p

    @property
    def difference(self) -> wording.Difference:
        """The row as the wording layer's :class:`~judgepanel.claims.wording.Difference`."""
        return wording.Difference(
            self.estimate,
            self.ci_low,
            self.ci_high,
            p=self.p,
            q=self.q if self.family and not math.isnan(self.q) else None,
            alpha=self.alpha,
            margin=self.margin,
            alternative=self.alternative,
        )

    @property
    def passes(self) -> bool:
        """Whether the decisive p is below alpha (a NaN p never passes)."""
        p = self.decisive_p
        return not math.isnan(p) and p < self.alpha

    @property
    def verdict(self) -> str:
        """The one verdict this comparison has on every page, worded by its kind."""
        if self.excluded:
            return NOT_TESTED
        if self.kind == "count":
            return wording.count(int(self.estimate), int(self.extra["n"]), alpha=self.alpha)
        if self.kind in ("difference",) or math.isnan(self.estimate):
            return self.difference.verdict
        if self.kind == "non-inferiority":
            m = self.margin_text
            if self.passes and self.ci_low > -(self.margin or 0.0):
                return f"not worse by more than {m}"
            return f"a loss of {m} not ruled out"
        if self.kind == "alt-test":
            return PASSES if self.passes else DOES_NOT_PASS
        # best-of: the picked one ahead, ahead by its estimate only, or not even that
        if self.passes and self.ci_low > 0:
            return LEADS
        return HIGHEST_ONLY if self.estimate > 0 else wording.NO_GAIN

    @property
    def margin_text(self) -> str:
        """The margin as a sentence gives it (``0.02``, or ``2 points``)."""
        m = self.margin or 0.0
        return f"{100 * m:g} points" if self.in_points else f"{m:g}"

    def numbers(self, symbol: str | None = None, n_resamples: int | None = None) -> str:
        """``Δρ = +0.05 [+0.01, +0.09], q = 0.027``: the estimate, its interval (its level
        named when it is not 95%) and the decisive p."""
        d = self.difference
        which = "q" if d.q is not None else "p"
        digits = 1 if self.in_points else 3
        scale = 100 if self.in_points else 1
        est = (
            wording.points(self.estimate)
            if self.in_points
            else wording.number(self.estimate, signed=True)
        )
        ci = wording.interval(scale * self.ci_low, scale * self.ci_high, digits, signed=True)
        level = "" if abs(self.level - 0.95) < 1e-9 else f" ({self.level:.1%} interval)"
        test = ""
        if not math.isnan(d.decisive_p):
            test = ", " + wording.p_value(d.decisive_p, n_resamples=n_resamples, name=which)
        return f"{symbol or self.symbol} = {est} {ci}{level}{test}"

    def _kind_words(self, a: str, b: str, **kw: Any) -> str:
        """The clause of a row that is not a plain difference (see :data:`KINDS`)."""
        v = self.verdict
        nums = self.numbers(kw.get("symbol"), kw.get("n_resamples"))
        if self.kind == "count":
            point = self.extra.get("point")
            text = wording.count(
                int(self.estimate), int(self.extra["n"]), alpha=self.alpha,
                point=None if point is None else int(point),
            )  # fmt: skip
            return f"{a}: {text}, over the family {b}"
        if self.kind == "non-inferiority":
            m = self.margin_text
            return f"{a} against {b}, with a margin of {m} stated before the result: {v} ({nums})"
        if self.kind == "alt-test":
            rate = self.extra.get("winning_rate")
            shown = "" if rate is None else f"winning rate {wording.number(float(rate), 2)}; "
            rule = self.extra.get("rule", "")
            return f"{a} {v} the alternative annotator test against {b} ({shown}{rule}{nums})"
        if v == LEADS:
            return f"{a} {v} {b} ({nums}, selection-adjusted)"
        if v == wording.NO_GAIN:
            return f"{a} shows {v} over {b} ({nums}, selection-adjusted)"
        return f"{a} is {v}; no test separates it from {b} ({nums}, selection-adjusted)"

    def words(self, a: str | None = None, b: str | None = None, **kw: Any) -> str:
        """The clause that states the verdict with its numbers (``describe_difference``)."""
        if self.excluded:
            return f"{a or self.a} against {b or self.b} is not tested ({self.excluded})"
        if self.kind != "difference" and not math.isnan(self.estimate):
            return self._kind_words(a or self.a, b or self.b, **kw) + self.spread_words()
        family = kw.pop("family", None)
        said = wording.describe_difference(
            self.difference,
            a or self.a,
            b or self.b,
            symbol=kw.pop("symbol", self.symbol),
            in_points=kw.pop("in_points", self.in_points),
            family=family,
            **kw,
        )
        return said + self.spread_words()

    def spread_words(self) -> str:
        """The estimate's spread over random choices, as a parenthesis ("" without one)."""
        if not self.spread_n:
            return ""
        signed = lambda x: wording.number(x, signed=True)  # noqa: E731
        return (
            f" (over {self.spread_n} random fold partitions the same difference averages "
            f"{signed(self.spread_mean)}, 5th to 95th percentile {signed(self.spread_p05)} to "
            f"{signed(self.spread_p95)}; the verdict is the fixed partition's)"
        )

    def with_spread(self, values: Any) -> Claim:
        """This claim with the spread of ``values``, the difference under each random choice."""
        v = np.asarray(values, dtype=float)
        v = v[np.isfinite(v)]
        if not v.size:
            return self
        return replace(
            self,
            spread_n=int(v.size),
            spread_mean=float(v.mean()),
            spread_p05=float(np.percentile(v, 5)),
            spread_p95=float(np.percentile(v, 95)),
        )

    def key(self) -> tuple[str, ...]:
        """What is compared with what, on what: two rows with one key must agree."""
        return (self.dataset, self.scope, self.metric, self.unit, *sorted((self.a, self.b)))

    def as_row(self) -> dict[str, Any]:
        row = {k: v for k, v in asdict(self).items() if k != "extra"}
        row["verdict"] = self.verdict
        row.update(self.extra)
        return row


def claim_of_row(row: Mapping[str, Any]) -> Claim:
    """A ledger row (``claims.csv`` read back) as its :class:`Claim`, to word it again."""
    names = {f for f in Claim.__dataclass_fields__ if f != "extra"}
    fields: dict[str, Any] = {}
    for k, v in row.items():
        if k not in names:
            continue
        if isinstance(v, float) and math.isnan(v):
            v = None
        fields[k] = v
    for k in ("scope", "family", "excluded", "note", "role", "page", "anchor", "symbol"):
        fields[k] = "" if fields.get(k) is None else str(fields[k])
    for k in ("estimate", "ci_low", "ci_high", "p", "q", "spread_mean", "spread_p05",
              "spread_p95"):  # fmt: skip
        fields[k] = math.nan if fields.get(k) is None else float(fields[k])
    fields["spread_n"] = int(fields.get("spread_n") or 0)
    fields["alpha"] = float(fields.get("alpha") or 0.05)
    fields["level"] = float(fields.get("level") or 0.95)
    fields["kind"] = str(fields.get("kind") or "difference")
    fields["alternative"] = str(fields.get("alternative") or "two-sided")
    fields["in_points"] = str(fields.get("in_points")).lower() == "true"
    if fields.get("margin") is not None:
        fields["margin"] = float(fields["margin"])
    if fields.get("symbol") == "":
        fields["symbol"] = SYMBOLS.get(str(fields.get("metric")), "Δ")
    extra = {}
    if fields["kind"] == "count":
        verdict = str(row.get("verdict", ""))
        m = re.match(r"(\d+) of (\d+)", verdict)
        extra = {"n": int(m.group(2)) if m else 0}
    return Claim(**fields, extra=extra)


def slug(text: str) -> str:
    """A name as a claim or family id takes it: lower case, other characters as ``_``."""
    out = "".join(c if c.isalnum() or c in "+-." else "_" for c in str(text).lower())
    return out.strip("_") or "_"


def declare(*families: Family) -> dict[str, Family]:
    """Families by name, refusing two declarations of one name."""
    out: dict[str, Family] = {}
    for f in families:
        if f.name in out:
            raise ValueError(f"family {f.name!r} is declared twice")
        out[f.name] = f
    return out


def check_families(claims: Iterable[Claim], families: Mapping[str, Family]) -> None:
    """Refuse a claim whose family was not declared, or whose alpha is not its family's."""
    for c in claims:
        if not c.family:
            continue
        if c.family not in families:
            known = ", ".join(sorted(families)) or "none"
            raise ValueError(
                f"claim {c.id!r} names family {c.family!r}, which was not declared "
                f"before the results (declared: {known})"
            )
        if c.alpha != families[c.family].alpha:
            raise ValueError(
                f"claim {c.id!r}: alpha {c.alpha} differs from its family's "
                f"{families[c.family].alpha}"
            )


def correct(claims: list[Claim], families: Mapping[str, Family]) -> list[Claim]:
    """The claims with ``q`` set by their family's correction over the claims in it.

    Rows without a family keep ``q`` NaN (their p decides); excluded rows are left out.
    A row without a p inside a family is refused: it would shrink the family silently.
    """
    from statsmodels.stats.multitest import multipletests

    check_families(claims, families)
    out = list(claims)
    for name, fam in families.items():
        members = [i for i, c in enumerate(out) if c.family == name]
        if not members:
            continue
        ps = [out[i].p for i in members]
        missing = [out[i].id for i, p in zip(members, ps, strict=True) if math.isnan(p)]
        if missing:
            raise ValueError(f"family {name!r}: claims without a p: {', '.join(missing)}")
        qs = multipletests(ps, alpha=fam.alpha, method=fam.method)[1]
        for i, q in zip(members, qs, strict=True):
            out[i] = replace(out[i], q=float(q))
    return out


def claims_frame(claims: Iterable[Claim]) -> pd.DataFrame:
    """The ledger as a table, one row a claim, with its verdict."""
    rows = [c.as_row() for c in claims]
    return pd.DataFrame(rows)


def contradictions(frame: pd.DataFrame) -> list[str]:
    """Pairs of rows that compare the same things on the same data with other verdicts.

    ``frame`` is a ledger (``claims.csv``). Rows with another unit or another family may
    differ in their numbers, but two rows of one comparison must not differ in verdict.
    """
    if frame.empty:
        return []
    sides = frame[["a", "b"]].astype(str).apply(lambda r: " | ".join(sorted(r)), axis=1)
    kind = frame["kind"].fillna("difference") if "kind" in frame else "difference"
    keyed = frame.assign(_sides=sides, _kind=kind)
    # a one-sided test that found nothing and a two-sided one that found nothing agree
    quiet = {wording.NO_GAIN: wording.NO_DIFFERENCE, wording.NO_LOSS: wording.NO_DIFFERENCE}
    found = []
    groups = ["dataset", "scope", "metric", "unit", "_sides", "_kind"]
    for key, rows in keyed.groupby(groups, sort=True):
        verdicts = sorted({quiet.get(v, v) for v in rows["verdict"]} - {NOT_TESTED})
        if len(verdicts) > 1:
            ids = ", ".join(rows["id"].astype(str))
            found.append(f"{' / '.join(map(str, key))}: {' vs '.join(verdicts)} ({ids})")
    return found


def tally(claims: Iterable[Claim], verdict: str) -> tuple[int, int, int | None]:
    """``(k, n, point)``: the tested claims with ``verdict``, the tested claims, and those
    whose point estimate alone points the same way (for ``wording.count(k, n, point=...)``;
    None for a verdict without a direction, such as an alternative annotator test's
    "passes").

    Excluded claims count in none of the three: they test nothing.
    """
    tested = [c for c in claims if not c.excluded]
    if verdict not in (wording.BEATS, wording.FALLS_BELOW, PASSES, LEADS):
        raise ValueError(f"cannot count rows by the verdict {verdict!r}")
    sign = {wording.BEATS: 1.0, wording.FALLS_BELOW: -1.0}.get(verdict)
    k = sum(c.verdict == verdict for c in tested)
    if sign is None:
        return k, len(tested), None
    point = sum(c.estimate * sign > 0 for c in tested)  # NaN compares False
    return k, len(tested), point


def count_claim(
    id: str,
    members: Sequence[Claim],
    family: str,
    *,
    what: str,
    over: str,
    verdict: str = wording.BEATS,
    **fields: Any,
) -> Claim:
    """A row of its own for "k of n with q < alpha": how many of ``members`` (the rows of
    ``family``, corrected) carry ``verdict``. ``what`` says what is counted, ``over`` the
    rows counted in words; the page records it with its family named in ``scope``."""
    inside = [c for c in members if c.family == family and not c.excluded]
    if not inside:
        raise ValueError(f"count {id!r}: no row of family {family!r} to count")
    alphas = {c.alpha for c in inside}
    if len(alphas) != 1:
        raise ValueError(f"count {id!r}: the rows of {family!r} have alphas {sorted(alphas)}")
    k, n, point = tally(inside, verdict)
    first = inside[0]
    fields.setdefault("dataset", first.dataset)
    fields.setdefault("metric", first.metric)
    fields.setdefault("unit", first.unit)
    return Claim(
        id=id, a=what, b=over, scope=family, estimate=float(k), ci_low=math.nan,
        ci_high=math.nan, kind="count", alpha=alphas.pop(), extra={"n": n, "point": point},
        **fields,
    )  # fmt: skip


def family_problems(frame: pd.DataFrame, families: Iterable[Mapping[str, Any]]) -> list[str]:
    """What keeps each declared family from being the set its q was corrected over.

    ``frame`` is a ledger (``claims.csv``), ``families`` the declared families (name,
    method, alpha). A family must have rows; its q must be its own rows' p corrected by its
    method (to the ledger's six significant digits); no row in it may lack a p; and no two
    of its rows may be one comparison twice (the same sides, data, scope and numbers: a
    duplicate counts one result twice).
    """
    from statsmodels.stats.multitest import multipletests

    found = []
    for fam in families:
        name = str(fam["name"])
        rows = frame[frame["family"] == name]
        if rows.empty:
            found.append(f"family {name}: declared, but no row is in it")
            continue
        p = pd.to_numeric(rows["p"], errors="coerce")
        if p.isna().any():
            ids = ", ".join(rows.loc[p.isna(), "id"].astype(str))
            found.append(f"family {name}: rows without a p: {ids}")
            continue
        q = multipletests(p.to_numpy(), alpha=float(fam["alpha"]), method=str(fam["method"]))[1]
        have = pd.to_numeric(rows["q"], errors="coerce").to_numpy()
        off = ~np.isclose(have, q, rtol=2e-5, atol=1e-12)
        if off.any():
            ids = ", ".join(rows["id"].astype(str)[off])
            found.append(f"family {name}: q is not its rows' p corrected by {fam['method']}: {ids}")
        # one comparison twice: the same sides, data and scope with the same numbers. Two
        # tests whose numbers tie by chance differ in a side or a scope (one judge on two
        # dimensions); rows equal by construction under other names are kept out where
        # they are made (a repeated block, a pool of one dimension, a panel of one)
        same = rows[["estimate", "ci_low", "ci_high", "p"]].astype(float).round(9)
        same = same.assign(
            **{k: rows[k].fillna("").astype(str) for k in ("a", "b", "dataset", "scope")}
        )
        dup = same.duplicated(keep=False)
        if dup.any():
            ids = ", ".join(rows.loc[dup, "id"].astype(str))
            found.append(f"family {name}: one comparison twice: {ids}")
    return found
