"""A rubric's scales checked against the data, said before any analysis.

The agreement study maps each question's rubric scale linearly onto the range of the
attribute that validates it, so a scale that is not the one the judges answered on changes
every number: a dimension the rubric gives no scale is 1-10, and with raters and answers
on 1-5 the map ``linear 1-10 -> 1-5`` turns a QWK of 0.890 into 0.407. ``data describe
--rubric``, ``import answers``, ``agree`` and ``report --dataset`` say here, one line a
question, where a scale is the default and where it differs from its attribute's range or
from the range its answers were observed on. Answers outside a scale are refused by the
answers reader (:func:`judgepanel.core.answers_file.read_answers`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from judgepanel.core.rubric import Rubric, Scale
from judgepanel.datasets import Dataset
from judgepanel.datasets.attribute import HOLISTIC
from judgepanel.datasets.mapping import validations
from judgepanel.stats.scale_map import LinearMap

Range = tuple[float, float]


@dataclass(frozen=True)
class ScaleCheck:
    """One question of a rubric beside the data.

    Attributes:
        question: ``holistic`` or the dimension's key.
        scale: the rubric's scale of it (``scale.defaulted``: the rubric declares none).
        attribute: the attribute that validates it, or None.
        attribute_range: that attribute's range (the people's), or None.
        observed: the lowest and highest answer to it, or None (no answers read).
    """

    question: str
    scale: Scale
    attribute: str | None = None
    attribute_range: Range | None = None
    observed: Range | None = None

    @property
    def span(self) -> Range:
        return (float(self.scale.min), float(self.scale.max))

    @property
    def differs(self) -> bool:
        """The scale is the default, or differs from the people's or the answers' range."""
        return (
            self.scale.defaulted
            or self.attribute_range not in (None, self.span)
            or self.observed not in (None, self.span)
        )

    def suggested(self) -> Range | None:
        """The scale the data points to (the people's range, else the answers'), where it
        is not the rubric's and is a range of whole numbers."""
        found = self.attribute_range or self.observed
        if found is None or found == self.span or self.scale.levels is not None:
            return None
        if any(float(v) != int(v) for v in found) or found[0] >= found[1]:
            return None
        return found


def rubric_questions(rubric: Rubric) -> dict[str, Scale]:
    """Each question of ``rubric`` by its name (``holistic`` first), with its scale."""
    found = {HOLISTIC: rubric.holistic.scale} if rubric.holistic is not None else {}
    return found | {key: dim.scale for key, dim in rubric.dimensions.items()}


def people_ranges(ds: Dataset) -> dict[str, tuple[str, Range]]:
    """Each question ``ds`` validates (``holistic`` or a dimension) -> the attribute's name
    and range."""
    found: dict[str, tuple[str, Range]] = {}
    for v in validations(ds):
        if v.dimension is None:
            continue
        if v.dimension == HOLISTIC:
            if not ds.has_overall or ds.score_range is None:
                continue
            low, high = ds.score_range
        elif v.column in ds.attribute_ranges:
            low, high = ds.attribute_ranges[v.column]
        elif v.column in ds.attributes:
            low, high = ds.attributes[v.column].low, ds.attributes[v.column].high
        else:
            continue
        found[v.dimension] = (v.name, (float(low), float(high)))
    return found


def observed_ranges(answers: Iterable[tuple[str, float]]) -> dict[str, Range]:
    """The lowest and highest value per question of ``(question, value)`` pairs."""
    found: dict[str, Range] = {}
    for question, value in answers:
        low, high = found.get(question, (value, value))
        found[question] = (float(min(low, value)), float(max(high, value)))
    return found


def store_ranges(calls: pd.DataFrame, dataset: str, rubric_sha: str = "") -> dict[str, Range]:
    """The observed range per question of a store frame's ok rubric answers of ``dataset``
    (under the rubric of ``rubric_sha`` where given)."""
    rows = calls[
        (calls["dataset"] == dataset)
        & calls["kind"].isin([HOLISTIC, "dimension"])
        & (calls["status"] == "ok")
    ]
    if rubric_sha:
        rows = rows[rows["rubric_sha"] == rubric_sha]
    question = rows["dimension"].where(rows["kind"] != HOLISTIC, HOLISTIC)
    return observed_ranges(zip(question, rows["value"].astype(float), strict=True))


def scale_checks(
    rubric: Rubric, labels: Dataset | None = None, observed: Mapping[str, Range] | None = None
) -> list[ScaleCheck]:
    """Every question of ``rubric`` beside its attribute in ``labels`` and its answers'
    ``observed`` range (either may be left out)."""
    people = people_ranges(labels) if labels is not None else {}
    out = []
    for question, scale in rubric_questions(rubric).items():
        name, span = people.get(question, (None, None))
        seen = (observed or {}).get(question)
        out.append(ScaleCheck(question, scale, name, span, seen))
    return out


def _text(r: Range) -> str:
    return f"{r[0]:g}-{r[1]:g}"


def _where(rubric: Rubric, question: str) -> str:
    key = "holistic" if question == HOLISTIC else f"dimensions.{question}"
    return f"{key} in {Path(rubric.source).name or 'the rubric'}"


def check_line(check: ScaleCheck, rubric: Rubric, answers: str = "") -> str:
    """One check in words: what differs, the map it makes, and the fix if one is due."""
    s = check.scale
    if s.defaulted:
        parts = [f"the rubric gives it no scale, so it is read on {s.min}-{s.max} (the default)"]
    else:
        parts = [f"the rubric's scale is {s.span()}"]
    if check.attribute_range is not None:
        parts.append(f"its attribute {check.attribute} is rated {_text(check.attribute_range)}")
    if check.observed is not None:
        where = f"the answers in {answers}" if answers else "its answers"
        parts.append(f"{where} run {_text(check.observed)}")
    line = f"{check.question}: " + "; ".join(parts)
    if check.attribute_range not in (None, check.span):
        assert check.attribute_range is not None
        line += f"; the agreement maps {LinearMap(check.span, check.attribute_range).name}"
    fix = check.suggested()
    if fix is not None:
        line += (
            f". If the judges answered on {_text(fix)}, declare `scale: {{min: {fix[0]:g}, "
            f"max: {fix[1]:g}}}` under {_where(rubric, check.question)}"
        )
    elif s.defaulted:
        line += f". Declare the judges' scale under {_where(rubric, check.question)}"
    return line


def scale_notes(
    rubric: Rubric,
    labels: Dataset | None = None,
    observed: Mapping[str, Range] | None = None,
    answers: str = "",
) -> list[str]:
    """One line for each question whose scale is the default or differs from its
    attribute's range or its answers' observed range (``answers``: the file they came
    from, named in the line); no line where the scale matches the data."""
    return [
        check_line(c, rubric, answers) for c in scale_checks(rubric, labels, observed) if c.differs
    ]
