"""Reading tables for the VisionQ report: the tidy metric tables, pivoted for the eye.

The tidy tables of :mod:`judgepanel.studies.visionq.accuracy` are what a reviewer checks;
these wide views put judges side by side the way a paper prints them. They reshape numbers and
never compute new ones.
"""

from __future__ import annotations

import pandas as pd

from judgepanel.studies.visionq.predictions import judge_column


def _cell(acc: float, low: float, high: float, digits: int) -> str:
    return f"{100 * acc:.{digits}f} [{100 * low:.{digits}f}, {100 * high:.{digits}f}]"


def axis_wide_table(
    overall: pd.DataFrame, per_axis: pd.DataFrame, *, digits: int = 0
) -> pd.DataFrame:
    """Accuracy (%) with its paper-bootstrap CI per judge, overall and per axis.

    Columns are ``Overall`` then the axes by question count (most first), each headed
    ``"<name> (<questions> / <papers>)"``; rows are judges by overall accuracy (best
    first), each cell ``"63 [57, 69]"``.

    Args:
        overall: :func:`~judgepanel.studies.visionq.accuracy_table` without grouping.
        per_axis: :func:`~judgepanel.studies.visionq.per_axis_accuracy` on the same predictions.
        digits: decimals of the percentages.
    """
    judge = judge_column(overall) or "judge"
    if judge not in overall.columns:
        overall = overall.assign(judge="judge")
        per_axis = per_axis.assign(judge="judge")
    order = overall.sort_values("accuracy", ascending=False, kind="stable")[judge].tolist()
    first = overall.iloc[0]
    counts = per_axis.groupby("axis", sort=False)[["n", "n_papers"]].first()
    axes = counts.sort_values(["n", "n_papers"], ascending=False, kind="stable").index
    out = pd.DataFrame({"judge": order})
    by_judge = overall.set_index(judge)
    out[f"Overall ({int(first['n'])} / {int(first['n_papers'])})"] = [
        _cell(*by_judge.loc[j, ["accuracy", "ci_low", "ci_high"]], digits) for j in order
    ]
    cells = per_axis.set_index([judge, "axis"])
    for axis in axes:
        n, n_papers = counts.loc[axis]
        out[f"{axis} ({int(n)} / {int(n_papers)})"] = [
            _cell(*cells.loc[(j, axis), ["accuracy", "ci_low", "ci_high"]], digits) for j in order
        ]
    return out


def leaf_wide_table(per_leaf: pd.DataFrame) -> pd.DataFrame:
    """Accuracy per leaf (rows) and judge (columns), with the leaf's questions and papers.

    Rows are ordered by axis, then by question count (most first); ``mean`` is the
    unweighted mean over judges, ``chance`` the leaf's chance accuracy.

    Args:
        per_leaf: :func:`~judgepanel.studies.visionq.per_leaf_accuracy` output.
    """
    judge = judge_column(per_leaf)
    keys = ["axis", "leaf"]
    meta = per_leaf.groupby(keys, sort=False)[["n", "n_papers", "chance"]].first()
    if judge is None:
        acc = per_leaf.set_index(keys)[["accuracy"]]
    else:
        acc = per_leaf.pivot(index=keys, columns=judge, values="accuracy")
        acc.columns = [str(c) for c in acc.columns]
    wide = meta.join(acc)
    wide["mean"] = acc.mean(axis=1)
    wide = wide.reset_index()
    wide = wide.sort_values(["axis", "n", "leaf"], ascending=[True, False, True], kind="stable")
    return wide.reset_index(drop=True)
