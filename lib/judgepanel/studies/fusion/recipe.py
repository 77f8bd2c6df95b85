"""The deployment recipe as an executable decision: probe, then panel or single model.

The fusion paper, section 7: probe the families with the holistic prompt at k=5, compute the best
one's headroom (1 - its fraction of the noise ceiling), and dimension-score a panel only
where headroom is large. This module turns that into code:

* :func:`derive_threshold` learns the headroom threshold from the trio retest: each trio
  is a point (its probe headroom, whether its fusion beat its best member). The threshold
  is the decision stump on headroom that classifies the most trios correctly; when the two
  classes do not overlap it is the midpoint of the gap between them, and the gap (or the
  overlap) is reported as the band the retest cannot resolve.
* :func:`decide` applies the rule to a probe's headroom and its bootstrap interval, and
  says when the decision is uncertain (the interval straddles the threshold, or it reaches
  into the band the retest cannot resolve).
* :func:`option_costs` prices each option in calls and dollars per image and per 1,000
  images, from the price table and the tokens per call observed in the store.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from judgepanel.claims import wording
from judgepanel.core.config import Price, ScoringDesign
from judgepanel.core.prompts import DIMENSIONS
from judgepanel.studies.fusion.logprob_designs import PRICE_BASIS

PANEL = "panel"
SINGLE = "single"


@dataclass(frozen=True)
class ThresholdRule:
    """Deploy a panel when the probe's headroom is at or above ``threshold``.

    Attributes:
        threshold: the headroom cut. inf means "never a panel" (no cut beats that constant
            rule, or no trio paid); -inf "always a panel"; when every trio paid, the
            smallest headroom observed (below it the retest saw nothing).
        low, high: the headroom band the retest cannot resolve (the gap between the classes
            when they separate, their overlap when they do not).
        accuracy: share of retest trios the rule classifies correctly.
        majority_accuracy: what the better constant rule (always or never a panel) scores;
            a cut is only informative if it beats this.
        n, n_pays: trios in the retest, and how many of them paid.
        separable: whether every paying trio has more headroom than every non-paying one.
        method: how the threshold was found, in words.
    """

    threshold: float
    low: float
    high: float
    accuracy: float
    majority_accuracy: float
    n: int
    n_pays: int
    separable: bool
    method: str

    @property
    def constant(self) -> bool:
        """The learnt rule is a constant one: headroom decides nothing."""
        return not np.isfinite(self.threshold)

    @property
    def statement(self) -> str:
        """The rule in words: ``panel if headroom >= 0.400``, or a constant rule."""
        if self.threshold == np.inf:
            return "never a panel, whatever the headroom"
        if self.threshold == -np.inf:
            return "always a panel, whatever the headroom"
        return f"a panel if headroom >= {self.threshold:.3f}, else the best single model"

    @property
    def band(self) -> str:
        """The unresolved band in words (an open end written as such, never ``inf``)."""
        return wording.interval(self.low, self.high)

    @property
    def learnt(self) -> str:
        """What the retest taught, in words: a threshold, or that it equals a constant rule.
        How many retest trios paid is a count of test results, which the page states through
        its count rows, so these words (quoted alone by a headline) leave it out."""
        constant = wording.constant_rule(self.threshold)
        if constant is None:
            return f"a panel where headroom is at least {self.threshold:.3f}"
        return f"{constant}, whatever the headroom: no threshold on headroom was learnt"

    def as_row(self) -> dict[str, object]:
        return {**asdict(self), "statement": self.statement, "constant": self.constant}


def derive_threshold(headroom: Sequence[float], pays: Sequence[bool]) -> ThresholdRule:
    """The headroom threshold that best separates trios where fusion paid from the rest.

    Candidate cuts are the midpoints between consecutive distinct headroom values; the rule
    "panel if headroom >= cut" is scored by the share of trios it classifies correctly.
    A cut is kept only if it beats the better constant rule (always / never a panel);
    otherwise the rule is that constant, since headroom then carries no usable signal in
    the retest. Among equally accurate cuts the one nearest the middle of the unresolved
    band is taken, so the threshold does not hug one class. With only one class in the
    retest the rule is one-sided and says so.

    Args:
        headroom: each trio's probe headroom.
        pays: whether that trio's fusion beat its best member (significantly, as the
            caller defines it).
    """
    h = np.asarray(headroom, float)
    y = np.asarray(pays, bool)
    if h.size == 0 or h.size != y.size:
        raise ValueError(f"need equally long, non-empty headroom and pays; got {h.size}, {y.size}")
    if np.isnan(h).any():
        raise ValueError("headroom contains NaN")
    n, n_pays = int(h.size), int(y.sum())
    majority = max(n_pays, n - n_pays) / n
    if n_pays == n:
        lo = float(h.min())
        return ThresholdRule(
            lo,
            -np.inf,
            lo,
            1.0,
            majority,
            n,
            n_pays,
            False,
            "one-sided: fusion paid in every trio of the retest, so the rule "
            "only says a panel paid down to the smallest headroom observed",
        )
    if n_pays == 0:
        return ThresholdRule(
            np.inf,
            float(h.max()),
            np.inf,
            1.0,
            majority,
            n,
            n_pays,
            False,
            "one-sided: fusion paid in no trio of the retest, so no headroom "
            "observed justifies a panel",
        )
    pay_min, rest_max = float(h[y].min()), float(h[~y].max())
    separable = pay_min > rest_max
    low, high = (rest_max, pay_min) if separable else (pay_min, rest_max)
    values = np.unique(h)
    cuts = (values[:-1] + values[1:]) / 2
    acc = np.array([np.mean((h >= c) == y) for c in cuts])
    if cuts.size == 0 or acc.max() <= majority + 1e-12:
        always = n_pays > n - n_pays
        return ThresholdRule(
            -np.inf if always else np.inf,
            low,
            high,
            majority,
            majority,
            n,
            n_pays,
            separable,
            "no cut on headroom classifies more of the trios correctly than "
            + ("always deploying a panel" if always else "never deploying one")
            + ", so the rule is that constant: headroom did not predict which trios paid",
        )
    best = np.flatnonzero(np.isclose(acc, acc.max()))
    mid = (low + high) / 2
    cut = float(cuts[best[np.argmin(np.abs(cuts[best] - mid))]])
    how = (
        "midpoint of the gap between the largest headroom of a trio where fusion did not "
        "pay and the smallest headroom of a trio where it did"
        if separable
        else "decision stump with the fewest misclassified trios; the classes overlap, so the "
        "band is their overlap"
    )
    return ThresholdRule(cut, low, high, float(acc.max()), majority, n, n_pays, separable, how)


@dataclass(frozen=True)
class Decision:
    """The recipe's decision for one dataset.

    Attributes:
        dataset: the dataset key.
        headroom, headroom_low, headroom_high: the probe's headroom and its interval.
        threshold: the rule's threshold.
        action: ``panel`` (dimension-score a panel and fit the combiner) or ``single``
            (deploy the best single model and stop).
        straddles: the headroom interval contains the threshold.
        in_band: the headroom interval reaches into the band the retest could not resolve
            (the point estimate need not lie in it: the interval is what the data allow).
        text: the decision in one sentence.
    """

    dataset: str
    headroom: float
    headroom_low: float
    headroom_high: float
    threshold: float
    action: str
    straddles: bool
    in_band: bool
    text: str

    @property
    def uncertain(self) -> bool:
        return self.straddles or self.in_band

    def as_row(self) -> dict[str, object]:
        return {**asdict(self), "uncertain": self.uncertain}


def decide(
    headroom: float,
    rule: ThresholdRule,
    interval: tuple[float, float] | None = None,
    *,
    dataset: str = "",
) -> Decision:
    """Panel or single model, from the probe's headroom and the retest's rule."""
    if not np.isfinite(headroom):
        raise ValueError(f"{dataset}: the probe's headroom is not a number ({headroom})")
    lo, hi = interval if interval is not None else (headroom, headroom)
    if lo > hi:
        raise ValueError(f"{dataset}: the headroom interval [{lo}, {hi}] is reversed")
    action = PANEL if headroom >= rule.threshold else SINGLE
    straddles = bool(lo < rule.threshold <= hi)
    in_band = bool(lo <= rule.high and hi >= rule.low)
    what = (
        "dimension-score a panel and fit the combiner"
        if action == PANEL
        else "deploy the best single model and stop"
    )
    if np.isfinite(rule.threshold):
        cmp = ">=" if action == PANEL else "<"
        text = f"headroom {headroom:.3f} {cmp} threshold {rule.threshold:.3f}: {what}"
    else:
        text = (
            f"headroom {headroom:.3f}, and the rule is "
            f"{wording.constant_rule(rule.threshold)}: {what}"
        )
    ci = wording.interval(lo, hi)
    if straddles:
        text += f"; uncertain, since the headroom interval {ci} contains the threshold"
    elif in_band:
        text += (
            f"; uncertain, since the headroom interval {ci} reaches into the band the retest "
            f"cannot resolve ({rule.band})"
        )
    return Decision(
        dataset,
        float(headroom),
        float(lo),
        float(hi),
        float(rule.threshold),
        action,
        straddles,
        in_band,
        text,
    )


def tokens_per_call(calls: pd.DataFrame) -> pd.DataFrame:
    """Mean prompt and completion tokens per successful call, by model and prompt kind.

    Args:
        calls: ``Store.frame()`` rows (columns model, kind, status, prompt_tokens,
            completion_tokens).
    """
    ok = calls[(calls["status"] == "ok") & calls["kind"].isin(["holistic", "dimension"])]
    ok = ok.dropna(subset=["prompt_tokens", "completion_tokens"])
    if ok.empty:
        raise ValueError("the store has no successful holistic or dimension call with tokens")
    out = (
        ok.groupby(["model", "kind"])[["prompt_tokens", "completion_tokens"]]
        .agg(lambda s: float(np.mean(s.astype(float))))
        .reset_index()
    )
    out["calls"] = ok.groupby(["model", "kind"]).size().to_numpy()
    return out


def _call_cost(tokens: pd.DataFrame, model: str, call_type: str, price: Price) -> float:
    row = tokens[(tokens["model"] == model) & (tokens["kind"] == call_type)]
    if row.empty:
        return float("nan")
    r = row.iloc[0]
    return price.cost(float(r["prompt_tokens"]), float(r["completion_tokens"]))


def option_costs(
    tokens: pd.DataFrame,
    families: Mapping[str, str],
    *,
    best_family: str,
    predeclared: Sequence[str],
    k: int,
    r: int,
    price: Callable[[str], Price],
    probe_k: int = 5,
) -> pd.DataFrame:
    """Calls and dollars per image of each option of the recipe.

    Options: the probe (every family, ``probe_k`` holistic calls), the best single model
    (``k`` holistic calls), the pre-declared panel (3 x (k + 5R)) and all families
    (m x (k + 5R)). Dollars use the price table and each model's mean observed tokens per
    holistic and per dimension call; a model with no observed call of a kind costs NaN.

    Returns:
        One row per option: ``option``, ``families``, ``calls_per_image``,
        ``calls_vs_single`` (multiple of the best single model's calls), ``usd_per_image``,
        ``usd_per_1000``.
    """
    n_dim = len(DIMENSIONS)

    def usd(fams: Sequence[str], holistic: int, dimension: int) -> float:
        total = 0.0
        for f in fams:
            model = families[f]
            p = price(model)
            total += holistic * _call_cost(tokens, model, "holistic", p)
            if dimension:
                total += dimension * _call_cost(tokens, model, "dimension", p)
        return total

    options = [
        ("probe", list(families), probe_k, 0),
        ("best single", [best_family], k, 0),
        ("pre-declared panel", list(predeclared), k, n_dim * r),
        (f"all {len(families)} families", list(families), k, n_dim * r),
    ]
    rows = []
    for name, fams, hol, dim in options:
        calls = len(fams) * (hol + dim)
        cost = usd(fams, hol, dim)
        rows.append(
            {
                "option": name,
                "families": ", ".join(fams),
                "calls_per_image": calls,
                "calls_vs_single": calls / k,
                "usd_per_image": cost,
                "usd_per_1000": 1000 * cost,
            }
        )
    return pd.DataFrame(rows)


ADVICE = {
    PANEL: "score a panel of families on the rubric dimensions and fuse them",
    SINGLE: "deploy the best single model and stop",
}
"""What each action asks a practitioner to do, for the headline."""


def recipe_table(
    decisions: Mapping[str, Decision], costs: Mapping[str, pd.DataFrame]
) -> pd.DataFrame:
    """One row per dataset: its decision, and each option's calls and dollars per 1,000."""
    rows = []
    for name, dec in decisions.items():
        row = dec.as_row()
        for c in costs[name].itertuples():
            row[f"calls {c.option}"] = c.calls_per_image
            row[f"USD/1000 {c.option}"] = c.usd_per_1000
        rows.append(row)
    return pd.DataFrame(rows)


def describe_rule(
    rule: ThresholdRule,
    decisions: Sequence[Decision],
    *,
    simulated: bool,
    counted: Sequence[str] = (),
) -> str:
    """The rule, how well it classifies the retest against a constant rule, where it comes
    from, and each dataset's decision; ``counted`` are the page's linked count rows of the
    trios that paid (one per dataset), which the tally of paying trios sums."""
    origin = (
        "simulated judges on the synthetic world, so it demonstrates the procedure and is "
        "no claim about real models"
        if simulated
        else "the scored datasets of this run"
    )
    return (
        f"Rule: {rule.statement} ({rule.method}). In the retest {rule.n_pays} of {rule.n} "
        "trios paid"
        + (f" ({'; '.join(counted)})" if counted else "")
        + f"; the rule classifies {rule.accuracy:.0%} of them correctly, against "
        f"{rule.majority_accuracy:.0%} for the better constant rule"
        + (f", so what the retest learnt is {rule.learnt}" if rule.constant else "")
        + f"; the band the retest cannot resolve is {rule.band}. The rule is derived from "
        f"{origin}. " + " ".join(f"{d.dataset}: {d.text}." for d in decisions)
    )


def describe_costs(costs: Mapping[str, pd.DataFrame]) -> str:
    """Per dataset: calls and dollars of the best single model, the panel and the probe,
    the price basis named once (:data:`PRICE_BASIS`, the basis of every priced call here)."""

    def one(name: str, table: pd.DataFrame) -> str:
        c = table.set_index("option")
        return (
            f"On {name}, the best single model costs {c.loc['best single', 'calls_per_image']} "
            f"calls (${c.loc['best single', 'usd_per_1000']:.2f} per 1,000 images), the "
            f"pre-declared panel {c.loc['pre-declared panel', 'calls_per_image']} calls "
            f"(${c.loc['pre-declared panel', 'usd_per_1000']:.2f}, "
            f"{c.loc['pre-declared panel', 'calls_vs_single']:.1f}× the calls), and the probe "
            f"{c.loc['probe', 'calls_per_image']} calls "
            f"(${c.loc['probe', 'usd_per_1000']:.2f} per 1,000)."
        )

    return " ".join(one(n, t) for n, t in costs.items()) + f" Dollars at the {PRICE_BASIS}."


def decision_headline(decision: Decision, rule: ThresholdRule) -> tuple[str, str]:
    """The index's headline of one decision: its value (the action, or ``uncertain``) and
    its sentence."""
    value = "uncertain" if decision.uncertain else decision.action
    text = (
        f"{decision.dataset}: at a headroom of {decision.headroom:.3f} "
        f"{wording.interval(decision.headroom_low, decision.headroom_high)}, the recipe says "
        f"{ADVICE[decision.action]}; the trio retest's rule is {rule.learnt}"
    )
    if decision.uncertain:
        text += (
            f"; the decision is uncertain: the headroom interval reaches the threshold "
            f"or the band the retest cannot resolve ({rule.band})"
        )
    return value, text


def costs_of(
    calls: pd.DataFrame,
    families: Mapping[str, str],
    design: ScoringDesign,
    *,
    best_family: str,
    predeclared: Sequence[str],
    price: Callable[[str], Price],
    probe_k: int = 5,
) -> pd.DataFrame:
    """:func:`option_costs` of one dataset: its observed tokens per call, its design's k and R."""
    return option_costs(
        tokens_per_call(calls), families, best_family=best_family, predeclared=predeclared,
        k=design.holistic_k, r=design.dimension_r, price=price, probe_k=probe_k,
    )  # fmt: skip


def held_out_rule(trios: pd.DataFrame) -> pd.DataFrame:
    """The threshold rule learnt without each dataset, tested on that dataset's trios.

    The fusion paper learnt its rule from two datasets and stated it as a hypothesis for a third.
    With three or more datasets the hypothesis can be tested: for each dataset, the rule
    is derived (:func:`derive_threshold`) from the other datasets' retest trios only, then
    it predicts which of the held-out dataset's trios pay (a panel where the trio's
    headroom is at or above the threshold). The table says how many predictions were
    right, against what the better constant rule would have scored on the same trios.

    Args:
        trios: the retest table: ``dataset``, ``headroom`` and ``pays`` per trio.

    Returns:
        One row per held-out dataset: ``held_out``, ``learnt_from``, ``rule`` (in words),
        ``threshold``, ``n_trios``, ``n_paid``, ``n_predicted``, ``n_right``,
        ``n_right_constant`` (the better constant rule on the held-out trios, chosen
        knowing their outcome: an upper bound for any constant rule).

    Raises:
        ValueError: fewer than three datasets (holding one out leaves one to learn from,
            and the rule of one dataset is not the study's).
    """
    names = list(dict.fromkeys(trios["dataset"]))
    if len(names) < 3:
        raise ValueError(
            f"holding a dataset out needs at least three datasets; the retest has {names}"
        )
    rows = []
    for name in names:
        test = trios[trios["dataset"] == name]
        train = trios[trios["dataset"] != name]
        rule = derive_threshold(train["headroom"], train["pays"])
        predicted = test["headroom"].to_numpy(float) >= rule.threshold
        paid = test["pays"].to_numpy(bool)
        rows.append(
            {
                "held_out": name,
                "learnt_from": ", ".join(n for n in names if n != name),
                "rule": rule.statement,
                "threshold": rule.threshold,
                "n_trios": int(paid.size),
                "n_paid": int(paid.sum()),
                "n_predicted": int(predicted.sum()),
                "n_right": int((predicted == paid).sum()),
                "n_right_constant": int(max(paid.sum(), paid.size - paid.sum())),
            }
        )
    return pd.DataFrame(rows)


def describe_held_out(table: pd.DataFrame) -> str:
    """The held-out test of the rule in one sentence per dataset."""
    parts = [
        f"learnt from {r.learnt_from}, the rule is {r.rule}; on the {r.n_trios} trios of "
        f"{r.held_out} it predicts a paying panel for {r.n_predicted} and fusion paid in "
        f"{r.n_paid}, so {r.n_right} of {r.n_trios} predictions are right (the better "
        f"constant rule, picked knowing the outcome, gets {r.n_right_constant})"
        for r in table.itertuples()
    ]
    return "Holding each dataset out in turn: " + "; ".join(parts) + "."
