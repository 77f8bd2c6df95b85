"""The report's glossary, and the links from headline sentences to it.

A headline is a plain sentence; where it uses a term of the field or of the project
(``H+P_gb``, ``TB-1``, ``ap@1``), the term stands in brackets after the words that say it,
and the index links it to its entry here. :func:`unbracketed_jargon` finds a short term a
headline uses outside brackets, that is, without the words that explain it.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

_ASCII = str.maketrans({"Δ": "delta-", "ρ": "rho", "–": "dash"})


@dataclass(frozen=True)
class Term:
    """One glossary entry.

    Attributes:
        term: the term as the glossary shows it.
        meaning: what it means, in plain words.
        jargon: a short name a reader outside the project cannot guess; a headline puts it
            in brackets after the words it stands for. Symbols for a number (ρ, q, CI) and
            plain phrases (panel mean) are not jargon.
        text: how the term appears in a sentence, if not as ``term``.
    """

    term: str
    meaning: str
    jargon: bool = False
    text: str | None = None

    @property
    def anchor(self) -> str:
        """The id of the term's entry on the index page."""
        ascii_ = self.written.translate(_ASCII).lower()
        return "term-" + re.sub(r"[^a-z0-9]+", "-", ascii_).strip("-")

    @property
    def written(self) -> str:
        return self.text or self.term


GLOSSARY: tuple[Term, ...] = (
    Term("ρ (rho)", "Spearman rank correlation between a judge's scores and the human mean "
         "score.", text="ρ"),
    Term("Δρ", "difference in ρ between two ways of scoring, on the same images; its CI and "
         "p come from resampling those images (paired bootstrap)."),
    Term("H", "holistic: the judge's one overall score of an image (its verdict).", jargon=True),
    Term("P", "per-dimension: the judge's scores on the five rubric dimensions.", jargon=True),
    Term("H+P_gb", "both inputs of several families fused by a gradient-boosting combiner, "
         "fitted out of fold.", jargon=True),
    Term("panel mean", "the plain average of the families' holistic scores; nothing is "
         "fitted."),
    Term("best single", "the one family whose holistic score alone correlates best with the "
         "human mean, picked on the same images it is then compared on."),
    Term("pre-declared", "the families fixed before any score existed; the confirmatory "
         "test."),
    Term("trio", "three families fused together; the trio sweep fits every trio of the "
         "panel."),
    Term("sham rubric", "a rubric whose dimension prompts carry another dimension's "
         "criteria: it shows whether fusion gains from what the rubric asks or only from "
         "asking five questions."),
    Term("MTMM", "multitrait-multimethod: do prompts measure the trait they name?",
         jargon=True),
    Term("probe", "a cheap first pass before any rubric scoring: every family's holistic "
         "mean over its first k runs."),
    Term("noise ceiling", "the expected correlation of a noise-free score with the noisy "
         "human mean, an approximate upper reference (a sample correlation can exceed it): "
         "the square root of that mean's reliability, estimated by correlating the means of "
         "random halves of each image's raters (Spearman–Brown corrected)."),
    Term("headroom", "1 − (ρ of the model with the highest ρ by point estimate ÷ the noise "
         "ceiling): the share of the ceiling that model leaves unreached (0 = at the "
         "ceiling)."),
    Term("Top-1", "VAB: the share of tasks whose best image the judge picks.", jargon=True),
    Term("Bot-1", "VAB: the share of tasks whose worst image the judge picks.", jargon=True),
    Term("TB-1", "VAB: the share of tasks where the judge picks both the best and the worst "
         "image.", jargon=True),
    Term("ap@1", "VAB: accuracy averaged over the three candidate orders a task is asked in.",
         jargon=True),
    Term("pass^3", "VAB: a task counts only when all three orders are answered correctly.",
         jargon=True),
    Term("score-then-rank", "VAB: the judge scores each image alone and the images are ranked "
         "by those scores (named rank:<family>), instead of comparing them in one call."),
    Term("position-blind", "picking an image without regard to the slot it is shown in; "
         "departures from it are a slot pull."),
    Term("rotation vote", "VisionQ: the question is asked again with its answer options "
         "rotated, and the most frequent answer counts."),
    Term("Bradley-Terry", "scores per image fitted to a judge's choices between two images: "
         "the chance that one image is chosen over another rises with the difference of their "
         "scores (ridge-penalised, a tie half a win each).", jargon=True),
    Term("decided pair", "a pair whose two human means differ by more than 1.96 standard "
         "errors of the difference, each mean's from its raters' spread.",
         text="decided pairs"),
    Term("position consistency", "the share of pairs asked in both orders whose two answers "
         "chose the same image."),
    Term("adaptive pairs", "pairs chosen in rounds where the current Bradley-Terry scores are "
         "least certain (win probability nearest one half), against random pairs of the same "
         "number."),
    Term("equal calls per image", "the two arms compared at the same number of calls per "
         "image: a comparison is one call that shows two images, half a call to each."),
    Term("pre-registered", "written in a file committed before any score it judges existed."),
    Term("type-I error", "the share of replicates in which a test rejects a difference that "
         "is not there, at a stated 5%; each page names the true value it tests against."),
    Term("power", "the share of replicates in which a test finds an effect that is there."),
    Term("coverage", "the share of replicates whose 95% interval contains the true value the "
         "page names."),
    Term("CI", "95% percentile interval from a bootstrap: over images, paired between the two "
         "sides compared (rubric fusion); over tasks (VAB); over papers (VisionQ)."),
    Term("q", "p value corrected over the comparisons of its table (Benjamini–Hochberg false "
         "discovery rate)."),
    Term("no detectable difference", "a two-sided test whose q is not below 0.05: the data "
         "do not show a difference, which is not evidence that there is none."),
    Term("no detectable gain", "a test that looked for a gain only and found none; a loss "
         "was not looked for, so none is ruled in or out."),
    Term("no detectable loss", "a test that looked for a loss only and found none."),
    Term("not worse by more than", "a non-inferiority test: the loss allowed (the margin) was "
         "stated before the result, and the data rule out a larger loss."),
    Term("highest by point estimate only", "the leader of several by its estimate, where no "
         "test that allows for having picked the leader separates it from the others."),
    Term("alternative annotator test", "could a judge replace one of the people? Each person is "
         "left out in turn; the judge passes when, for at least half of them, it represents the "
         "others about as well as they do, allowing it ε (fixed before looking) for being "
         "cheap."),
    Term("advantage probability", "how often a judge represents the other people at least "
         "as well as a left-out person does, averaged over the people."),
    Term("points", "percentage points: the difference between two percentages."),
    Term("–", "in a table: no value, for example too few items to compute it."),
)  # fmt: skip
"""Terms the headlines and tables use, in plain words, for the index's glossary."""

_EDGE = r"[\w@^+:-]"
_BY_TEXT = {t.written: t for t in GLOSSARY if t.written != "–"}
_PATTERN = re.compile(
    f"(?<!{_EDGE})("
    + "|".join(re.escape(w) for w in sorted(_BY_TEXT, key=len, reverse=True))
    + f")(?!{_EDGE})"
)


def _matches(text: str) -> list[re.Match[str]]:
    return list(_PATTERN.finditer(text))


def _bracket_depth(text: str) -> list[int]:
    """How many brackets, round or square, are open before each character of ``text``."""
    depth, out = 0, []
    for ch in text:
        if ch in ")]":
            depth = max(0, depth - 1)
        out.append(depth)
        if ch in "([":
            depth += 1
    return out


def unbracketed_jargon(text: str) -> list[str]:
    """The jargon terms ``text`` uses outside brackets, in order (none for a plain sentence)."""
    depth = _bracket_depth(text)
    return [
        m.group(1) for m in _matches(text) if _BY_TEXT[m.group(1)].jargon and not depth[m.start()]
    ]


def link_terms(text: str) -> str:
    """``text`` as escaped HTML, with the first use of each glossary term linked to its entry."""
    out: list[str] = []
    seen: set[str] = set()
    last = 0
    for m in _matches(text):
        term = _BY_TEXT[m.group(1)]
        if term.written in seen:
            continue
        seen.add(term.written)
        out.append(html.escape(text[last : m.start()]))
        out.append(f'<a class="term" href="#{term.anchor}">{html.escape(m.group(1))}</a>')
        last = m.end()
    out.append(html.escape(text[last:]))
    return "".join(out)
