"""The words a computed sentence may use for a number, a difference, a ranking or a count.

Every headline and every computed claim of the report goes through these functions, so a
reader can rely on one convention (README, "Wording conventions"):

* **a difference** is "beats" or "falls below" only when a test in that direction has a p
  (or q, when the page corrects over a family) below ``alpha`` *and* its interval excludes
  zero on that side; otherwise it is "no detectable difference", with the interval written
  out as the range it allows. An interval alone never decides: a difference without a p,
  or whose one-sided test looked the other way, names no direction. "No worse"
  and "equivalent" need an equivalence margin stated before the comparison, with the whole
  interval inside it; without one they are never said.
* **a ranking** names "the highest" only when the leader is separated from the runner-up by
  the page's own test; otherwise it names every judge tied with the leader.
* **a count** is "k of n with q < 0.05"; a count by point estimate, when shown, sits in a
  clause of its own.
* **units and edges**: differences of proportions in percentage points ("points"), a
  bootstrap p at its floor as "p ≤ 1/(B+1)", and never ``inf``, ``nan`` or a dash in place
  of a number.
* **a rule learnt from data** that equals a constant rule says so.

:func:`prose_problems` finds the forms these rules forbid in finished text; the report's
tests run it over every computed sentence.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

BEATS = "beats"
FALLS_BELOW = "falls below"
NO_DIFFERENCE = "no detectable difference"
NO_GAIN = "no detectable gain"
"""A one-sided test for a gain that found none."""
NO_LOSS = "no detectable loss"
"""A one-sided test for a loss that found none."""
EQUIVALENT = "equivalent"
NOT_ESTIMABLE = "not estimable"

_MINUS = "−"


def number(x: float, digits: int = 3, *, signed: bool = False) -> str:
    """A finite number for prose (a true minus sign); a non-finite one is refused.

    Raises ValueError on inf or NaN: a sentence must say in words what is missing
    (:func:`interval` and :func:`estimate` do), never print ``inf`` or ``nan``.
    """
    if not math.isfinite(x):
        raise ValueError(f"{x!r} cannot be written in a sentence; say what it means instead")
    text = f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"
    if text.lstrip("+-").strip("0.") == "":
        text = text.lstrip("+-")
        text = ("+" + text) if signed else text
    return text.replace("-", _MINUS)


def interval(low: float, high: float, digits: int = 3, *, signed: bool = False) -> str:
    """``[0.531, 0.692]``; an open end in words (``from 0.636 upward``), never ``inf``."""
    if math.isnan(low) or math.isnan(high):
        return "with no interval (too few resamples were defined)"
    lo_open, hi_open = math.isinf(low), math.isinf(high)
    if lo_open and hi_open:
        return "unbounded in both directions"
    if hi_open:
        return f"from {number(low, digits, signed=signed)} upward"
    if lo_open:
        return f"up to {number(high, digits, signed=signed)}"
    return f"[{number(low, digits, signed=signed)}, {number(high, digits, signed=signed)}]"


def percent_interval(low: float, high: float, digits: int = 1) -> str:
    """``[53.1%, 69.2%]`` for an interval of a proportion."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return interval(100 * low, 100 * high, digits)
    return f"[{100 * low:.{digits}f}%, {100 * high:.{digits}f}%]"


def estimate(est: float, low: float, high: float, digits: int = 3, *, signed: bool = True) -> str:
    """``+0.118 [+0.075, +0.163]``: a point estimate with its interval."""
    if math.isnan(est):
        return NOT_ESTIMABLE
    return f"{number(est, digits, signed=signed)} {interval(low, high, digits, signed=signed)}"


_HYPHEN_MINUS = re.compile(r"(?<![\w\-–−/.=])-(?=\d)")
"""A hyphen written as the sign of a number: after a space or bracket, before a digit (not
in a range such as 1-10, a date, an identifier, an exponent or a flag)."""


def true_minus(text: str) -> str:
    """``text`` with each number's hyphen-minus sign written as a true minus (−), as every
    number the wording layer writes is: a page's sentences read alike whichever helper
    formatted their numbers."""
    return _HYPHEN_MINUS.sub(_MINUS, text)


def points(delta: float, digits: int = 1, *, signed: bool = True) -> str:
    """A difference of two proportions in percentage points: ``+3.2 points``."""
    return f"{number(100 * delta, digits, signed=signed)} points"


def points_interval(delta: float, low: float, high: float, digits: int = 1) -> str:
    """``+3.2 points [−1.0, +7.5]``."""
    return f"{points(delta, digits)} {interval(100 * low, 100 * high, digits, signed=True)}"


def p_value(p: float, *, n_resamples: int | None = None, name: str = "p") -> str:
    """``p = 0.012``, ``p < 0.0001``, or at a bootstrap's floor ``p ≤ 1/10,001``.

    A bootstrap p is at least 1/(B+1) (the observed sample counts as one resample), so at
    that floor the data say only that no resample went the other way.
    """
    if math.isnan(p):
        return f"{name} not estimable"
    if n_resamples is not None and p <= 1.0 / (n_resamples + 1) * (1 + 1e-9):
        return f"{name} ≤ 1/{n_resamples + 1:,} (no resample went the other way)"
    if p < 1e-4:
        return f"{name} < 0.0001"
    return f"{name} = {p:.4f}" if p < 0.001 else f"{name} = {p:.3f}"


@dataclass(frozen=True)
class Difference:
    """A paired difference as a page states it: what is compared, and how it was tested.

    Attributes:
        delta, low, high: the estimate of ``a − b`` and its interval.
        p: the test's p (one- or two-sided, as the page tests it); ``nan`` when not tested.
        q: the p corrected over the page's family; it decides instead of ``p`` when given.
        alpha: the level the decision uses.
        margin: an equivalence margin stated before the comparison, or ``None``.
        alternative: the direction ``p`` tests: ``two-sided``, ``greater`` (a gain) or
            ``less``. A one-sided test cannot find the other direction, and the interval
            alone does not: a one-sided test that finds nothing says "no detectable gain"
            (or "no detectable loss"), never "no detectable difference", which would claim
            the other side was looked at too.
    """

    delta: float
    low: float
    high: float
    p: float = math.nan
    q: float | None = None
    alpha: float = 0.05
    margin: float | None = None
    alternative: str = "two-sided"

    @classmethod
    def of(cls, row: object, *, alternative: str = "two-sided", **kw: float | None) -> Difference:
        """From a table row (a named tuple or Series) with ``delta``, ``ci_low``, ``ci_high``
        and, where present, ``p`` and ``q``: the columns every comparison table here has."""
        p = getattr(row, "p", math.nan)
        q = getattr(row, "q", None)
        fields = {
            "p": math.nan if p is None else float(p),
            "q": None if q is None or (isinstance(q, float) and math.isnan(q)) else float(q),
        }
        fields.update(kw)
        return cls(
            float(row.delta),
            float(row.ci_low),
            float(row.ci_high),  # type: ignore[attr-defined]
            alternative=alternative,
            **fields,  # type: ignore[arg-type]
        )

    def __post_init__(self) -> None:
        if self.alternative not in ("two-sided", "greater", "less"):
            raise ValueError(f"unknown alternative {self.alternative!r}")

    @property
    def decisive_p(self) -> float:
        return self.q if self.q is not None else self.p

    def tested(self, direction: str) -> bool:
        """Whether the p speaks to a difference in ``direction`` (``greater``/``less``)."""
        return self.alternative in ("two-sided", direction)

    @property
    def verdict(self) -> str:
        """``beats``, ``falls below``, ``equivalent``, or what was not found: ``no detectable
        difference`` (two-sided), ``no detectable gain`` / ``loss`` (one-sided)."""
        if math.isnan(self.delta) or math.isnan(self.low) or math.isnan(self.high):
            return NOT_ESTIMABLE
        passes = not math.isnan(self.decisive_p) and self.decisive_p < self.alpha
        if self.low > 0 and passes and self.tested("greater"):
            return BEATS
        if self.high < 0 and passes and self.tested("less"):
            return FALLS_BELOW
        if self.margin is not None and -self.margin < self.low and self.high < self.margin:
            return EQUIVALENT
        return {"greater": NO_GAIN, "less": NO_LOSS}.get(self.alternative, NO_DIFFERENCE)

    @property
    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0


def describe_difference(
    d: Difference,
    a: str,
    b: str,
    *,
    symbol: str = "Δρ",
    digits: int = 3,
    in_points: bool = False,
    n_resamples: int | None = None,
    family: str | None = None,
) -> str:
    """One clause for ``a − b``: its verb first, then the numbers that decide it.

    ``"H+P_gb beats the panel mean (Δρ = +0.118 [+0.075, +0.163], q = 0.002)"`` or ``"H+P_gb
    and the panel mean show no detectable difference (Δρ = −0.050; the interval allows
    −0.115 to +0.013)"``. An interval that excludes zero whose q fails the correction is
    said to be so, naming the family corrected over when given.

    Args:
        d: the difference and its test.
        a, b: the two sides, as the reader knows them.
        symbol: what is differenced (``Δρ``, ``Δ accuracy``).
        in_points: ``d`` is a difference of proportions, written in percentage points.
        n_resamples: the bootstrap's B, so a p at its floor is written as such.
        family: what the correction ran over (``"the 16 comparisons of the table"``).
    """

    def fmt(x: float, signed: bool = True) -> str:
        return points(x, signed=signed) if in_points else number(x, digits, signed=signed)

    verdict = d.verdict
    if verdict == NOT_ESTIMABLE:
        return f"the difference between {a} and {b} is not estimable here"
    which = "q" if d.q is not None else "p"
    test = ""
    if not math.isnan(d.decisive_p):
        test = ", " + p_value(d.decisive_p, n_resamples=n_resamples, name=which)
    scale = 100 if in_points else 1
    ci = interval(scale * d.low, scale * d.high, 1 if in_points else digits, signed=True)
    numbers = f"{symbol} = {fmt(d.delta)} {ci}{test}"
    if verdict == BEATS:
        return f"{a} beats {b} ({numbers})"
    if verdict == FALLS_BELOW:
        return f"{a} falls below {b} ({numbers})"
    allows = (
        f"the interval allows {fmt(d.low)} to {fmt(d.high)}"
        if math.isfinite(d.low) and math.isfinite(d.high)
        else f"the interval is {ci}"
    )
    if verdict == EQUIVALENT:
        margin = fmt(d.margin or 0.0, signed=False)
        return (
            f"{a} and {b} are equivalent within the stated margin of ±{margin} "
            f"({symbol} = {fmt(d.delta)}; {allows}{test})"
        )
    side = "greater" if d.low > 0 else "less"
    if verdict == NO_DIFFERENCE:
        found = f"{a} and {b} show no detectable difference"
    else:
        found = (
            f"{a} shows {verdict} over {b}"
            if verdict == NO_GAIN
            else f"{a} shows {verdict} against {b}"
        )
    if d.excludes_zero and math.isnan(d.decisive_p):
        return (
            f"{found} ({symbol} = {fmt(d.delta)}; "
            f"{allows}, with no test: an interval alone decides nothing)"
        )
    if d.excludes_zero and not d.tested(side):
        looked = "a gain" if d.alternative == "greater" else "a loss"
        return (
            f"{found} ({symbol} = {fmt(d.delta)}; {allows}{test}; the test looked for {looked} "
            "only)"
        )
    if d.excludes_zero:
        # "after correction" only where the correction is what stopped it
        raw_passes = not math.isnan(d.p) and d.p < d.alpha
        after = (
            (" after correction" + (f" over {family}" if family else ""))
            if d.q is not None and raw_passes
            else ""
        )
        return (
            f"{found}{after} ({symbol} = "
            f"{fmt(d.delta)}; {allows}, but {which} = {d.decisive_p:.3f} is not below "
            f"{d.alpha:g})"
        )
    return f"{found} ({symbol} = {fmt(d.delta)}; {allows}{test})"


def leader(
    names: Sequence[str],
    separated: Sequence[bool],
    *,
    noun: str = "judge",
) -> str:
    """The top of a ranking in words, given which runners-up the page's test separates.

    Args:
        names: the ranking, leader first.
        separated: for each of ``names[1:]``, whether the page's test separates it from the
            leader. Those not separated are tied with the leader and are named with it.
        noun: what is ranked, singular.

    Returns:
        ``"aurora"`` when the leader stands alone, else ``"aurora and dune (tied: no test
        separates them)"`` with every tied name. :func:`leads_alone` tells the caller
        whether "the highest" may be said.
    """
    if not names:
        raise ValueError(f"a ranking of no {noun}s has no leader")
    if len(separated) != len(names) - 1:
        raise ValueError(
            f"need one 'separated' per runner-up: {len(names) - 1}, got {len(separated)}"
        )
    tied = [n for n, s in zip(names[1:], separated, strict=True) if not s]
    if not tied:
        return names[0]
    return f"{join([names[0], *tied])} (tied: no test separates them)"


def separated_from_leader(
    order: Sequence[str],
    pairs: pd.DataFrame,
    *,
    a: str = "judge_a",
    b: str = "judge_b",
    stat: str = "q",
    alpha: float = 0.05,
) -> list[bool]:
    """For each runner-up of ``order`` (leader first), whether a pairwise test separates it.

    Args:
        order: the ranking by point estimate, leader first.
        pairs: one row per tested pair (in either order) with columns ``a``, ``b``, ``stat``.
        stat: the p or q that decides; a pair the table lacks counts as not separated.
    """
    if not order:
        return []
    leader_name = order[0]
    decided = {
        frozenset((x, y)): float(v) for x, y, v in zip(pairs[a], pairs[b], pairs[stat], strict=True)
    }
    return [decided.get(frozenset((leader_name, r)), math.nan) < alpha for r in order[1:]]


def leads_alone(separated: Sequence[bool]) -> bool:
    """Whether the leader is separated from every runner-up (so "the highest" may be said)."""
    return bool(separated) and all(separated)


def count(
    k: int,
    n: int,
    *,
    alpha: float = 0.05,
    stat: str = "q",
    point: int | None = None,
    what: str = "",
) -> str:
    """``7 of 15 with q < 0.05``, and the point-estimate count in a clause of its own."""
    if not 0 <= k <= n:
        raise ValueError(f"a count of {k} of {n} is impossible")
    noun = f" {what}" if what else ""
    text = f"{k} of {n}{noun} with {stat} < {alpha:g}"
    if point is not None:
        if not 0 <= point <= n:
            raise ValueError(f"a point-estimate count of {point} of {n} is impossible")
        text += f" ({point} of {n} by point estimate alone)"
    return text


def join(names: Sequence[str], conjunction: str = "and") -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    names = list(names)
    if len(names) <= 2:
        return f" {conjunction} ".join(names)
    return f"{', '.join(names[:-1])} {conjunction} {names[-1]}"


def constant_rule(threshold: float) -> str | None:
    """What a learnt threshold amounts to when it is a constant, else ``None``."""
    if threshold == math.inf:
        return "the constant rule 'never a panel'"
    if threshold == -math.inf:
        return "the constant rule 'always a panel'"
    return None


# -- the check of finished prose ---------------------------------------------------------

_NUMBER_WORDS = re.compile(r"(?<![\w.])(inf|-inf|nan|NaN|None)(?![\w(])")
_DASH_FOR_NUMBER = re.compile(r"(?:[=\[(,]|\bis|\bof|\bat)\s*[–—](?=\s|[\]),;.]|$)")
_NO_WORSE = re.compile(r"\bno worse\b|\bnot worse\b|\b(?:rule|claim)s? (?:holds|held)\b", re.I)
_MATCHES = re.compile(r"\bmatch(?:es)?\b(?! the committed)", re.I)
_SIGNED_PERCENT = re.compile(r"(?<![\w])[+−-]\d+(?:\.\d+)?\s?%")
_RELATIVE = re.compile(r"\b(?:share|relative|ratio)\b", re.I)
_PLURAL_POSSESSIVE = re.compile(r"\b(?:families|judges|models|trios|datasets|images)'s\b")
_BEST = re.compile(
    r"\bthe (?:best|highest|strongest|most accurate)(?: \w+)? "
    r"(?:judge|model|family|ranker|arm|trio|design)s?\b",
    re.I,
)
_TIED = re.compile(r"\bti(?:e|ed|es)\b", re.I)


def prose_problems(text: str) -> list[str]:
    """The forms the wording conventions forbid, each named with its offending excerpt.

    Checks one finished sentence or paragraph: ``inf``/``nan`` printed as a number, a dash
    standing for a number, "no worse" or a rule that "held" without an equivalence margin
    named in the same sentence, "matches" for two estimates, a signed percentage (a
    difference of proportions must be in points; a relative change, named as a share or
    ratio, may be a percentage), a possessive on a plural, and "the best"
    in a sentence that also says the leaders are tied. Block quotes (lines starting with
    ``>``) are left alone: they quote a source as written.
    """
    found = []
    # a quotation (a markdown block quote) is someone else's words, shown as written
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith(">"))
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        for pattern, what in (
            (_NUMBER_WORDS, "a non-finite number printed"),
            (_DASH_FOR_NUMBER, "a dash in place of a number"),
            (_PLURAL_POSSESSIVE, "a possessive on a plural"),
            (_MATCHES, "'matches' for two estimates (give the difference)"),
        ):
            m = pattern.search(sentence)
            if m:
                found.append(f"{what}: ...{_excerpt(sentence, m)}...")
        m = _SIGNED_PERCENT.search(sentence)
        if m and not _RELATIVE.search(sentence):
            found.append(
                f"a difference of proportions in % (write points): ...{_excerpt(sentence, m)}..."
            )
        m = _NO_WORSE.search(sentence)
        if m and "margin" not in sentence:
            found.append(f"equivalence without a stated margin: ...{_excerpt(sentence, m)}...")
        m = _BEST.search(sentence)
        if m and _TIED.search(sentence):
            found.append(f"'the best' beside a tie: ...{_excerpt(sentence, m)}...")
    return found


def _excerpt(sentence: str, m: re.Match[str], width: int = 40) -> str:
    return sentence[max(0, m.start() - width) : m.end() + width]
