"""Verdict words on a finished page that no ledger row carries.

A verdict ("beats", "no detectable gain", "passes", "tied", "the best judge", "3 of 8 with
q < 0.05") may appear on a page only inside a claim span, the link
:func:`judgepanel.report.ledger.claim_link` writes around the words of a ledger row (or a
reference link to another page's row). :func:`stray_verdicts` reads a page's HTML as a
reader sees it (code, tables, block quotes and the page furniture left out) and returns
every sentence with a verdict word outside such a span, quoted, so the report's check can
fail the page and say where.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd

from judgepanel.claims.rows import family_problems
from judgepanel.report.manifest import FAMILIES_TABLE, LEDGER_TABLE

VERDICT_WORDS = re.compile(
    r"\b(?:beats?|beaten|outperform(?:s|ed)?|falls? below|fell below|"
    r"leads\b(?! to\b)|the leading (?:judge|ranker|model|famil|trio|arm)\w*|"
    r"(?<!\bby )the (?:best|strongest|highest|most accurate)\b(?! (?:single|member|image|"
    r"photo|picture|one|or|and|of the set|and the worst))(?![^.;]{0,60}by point estimate)|"
    r"tied|ties with|no (?:detectable |significant )?(?:difference|gain|loss)|"
    r"passe[sd]|does not pass|did not pass|fails? the|failed the|may replace|"
    r"stays? (?:above|below|ahead|within)|equivalent|not worse|no worse|loses at most|"
    r"significantly|better than|worse than|"
    r"\d+ of \d+\b[^.;]{0,80}?\bwith [pq] < 0?\.\d+)",
    re.I,
)
"""What states a verdict: a direction, a tie, a pass, a bound on a loss, or a count of
rows that pass a correction."""

_SKIP = {"script", "style", "pre", "code", "blockquote", "head", "svg", "math"}
_SKIP_CLASSES = ("jp-InputArea", "jp-InputPrompt", "jp-OutputPrompt", "jp-sim-banner",
                 "jp-nav", "glossary", "jp-definitions", "jp-table", "ledger")  # fmt: skip
"""Code, the banner, definitions (a glossary says what a verdict word means) and data
tables (their verdict column stands beside each row's ledger id)."""
_BLOCKS = {"p", "div", "li", "h1", "h2", "h3", "h4", "h5", "h6", "br", "tr", "td", "th", "ul",
           "ol", "section", "dd", "dt", "figcaption", "caption", "details", "summary"}  # fmt: skip
_VOID = {"br", "img", "hr", "meta", "link", "input", "wbr", "source", "col", "area"}
CLAIM = "\x00"
"""Stands in the read text for the words of a claim span: they carry their own row."""


@dataclass(frozen=True)
class Stray:
    """A sentence of ``page`` whose ``word`` states a verdict outside a claim span."""

    page: str
    word: str
    sentence: str

    def __str__(self) -> str:
        return f"{self.page}: {self.word!r} outside a ledger row in: {self.sentence}"


class _Reader(HTMLParser):
    """The page's prose, claim spans replaced by :data:`CLAIM`, blocks on lines of their own."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.stack: list[tuple[str, bool, bool]] = []  # (tag, skips, is claim)

    def _skipping(self) -> bool:
        return any(s for _, s, _ in self.stack)

    def _in_claim(self) -> bool:
        return any(c for _, _, c in self.stack)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        claim = tag == "a" and any(c in ("jp-claim", "jp-claim-ref") for c in classes)
        skip = tag in _SKIP or any(c in _SKIP_CLASSES for c in classes)
        if tag in _BLOCKS:
            self.parts.append("\n")
        if tag in _VOID:
            return
        if claim and not self._skipping() and not self._in_claim():
            self.parts.append(CLAIM)
        self.stack.append((tag, skip, claim))

    def handle_endtag(self, tag: str) -> None:
        if tag in _BLOCKS:
            self.parts.append("\n")
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data: str) -> None:
        if self._skipping() or self._in_claim():
            return
        self.parts.append(data)


def prose(page_html: str) -> str:
    """The page's readable prose, each claim span's words replaced by :data:`CLAIM`."""
    reader = _Reader()
    reader.feed(page_html)
    reader.close()
    return "".join(reader.parts)


def sentences(text: str) -> list[str]:
    """Sentences of ``text``: split at a full stop, question or exclamation mark followed by
    a space, and at every line break (a block of the page)."""
    out = []
    for block in text.split("\n"):
        block = " ".join(block.split())
        out += [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z(])", block) if s]
    return out


def stray_verdicts(page_html: str, page: str = "") -> list[Stray]:
    """Every sentence of the page that states a verdict outside a claim span."""
    found = []
    for sentence in sentences(prose(page_html)):
        m = VERDICT_WORDS.search(sentence.replace(CLAIM, " "))
        if m:
            shown = sentence.replace(CLAIM, "[row]")
            found.append(Stray(page, m.group(0), shown))
    return found


def verdict_sentences(page_html: str) -> tuple[int, int]:
    """``(in rows, outside)``: sentences whose verdict a claim span carries, and those with a
    verdict word outside one (a sentence with both counts as outside)."""
    inside = outside = 0
    for sentence in sentences(prose(page_html)):
        if VERDICT_WORDS.search(sentence.replace(CLAIM, " ")):
            outside += 1
        elif CLAIM in sentence:
            inside += 1
    return inside, outside


_FLOAT_NOISE = re.compile(r"(?<![\w.])[−-]0\.0+(?![\d])|\d\.\d*?(?:0{6,}|9{6,})\d")
"""A negative zero ("−0.000") or a float's rounding noise (0.30000000000000004)."""


def float_noise(page_html: str, page: str = "") -> list[Stray]:
    """Sentences of the page that print a negative zero or a float's noise."""
    found = []
    for sentence in sentences(prose(page_html)):
        m = _FLOAT_NOISE.search(sentence)
        if m:
            found.append(Stray(page, m.group(0), sentence.replace(CLAIM, "[row]")))
    return found


def report_pages(outputs: Path) -> list[Path]:
    """The pages a reader reads: the index, the ledger page and every notebook's page (the
    call explorers list answers, not findings)."""
    outputs = Path(outputs)
    pages = [outputs / "index.html", outputs / "claims.html"]
    pages += sorted(p for p in outputs.glob("*/*.html") if p.parent.name != "explorer")
    return [p for p in pages if p.exists()]


def check_report(outputs: Path) -> list[str]:
    """What keeps a finished report from concluding one thing: a verdict word outside a
    ledger row, a negative zero or float noise in prose, and a correction family that is
    not the set its q was corrected over (:func:`~judgepanel.claims.rows.family_problems`)."""
    outputs = Path(outputs)
    found: list[str] = []
    for page in report_pages(outputs):
        text = page.read_text(encoding="utf-8")
        where = page.relative_to(outputs).as_posix()
        found += [str(s) for s in stray_verdicts(text, where)]
        found += [f"{s.page}: float noise {s.word!r} in: {s.sentence}" for s in float_noise(
            text, where)]  # fmt: skip
    ledger, declared = outputs / LEDGER_TABLE, outputs / FAMILIES_TABLE
    if ledger.exists() and declared.exists():
        frame = pd.read_csv(ledger, keep_default_na=False, na_values=[""])
        fams = pd.read_csv(declared, keep_default_na=False).to_dict(orient="records")
        found += family_problems(frame, fams)
    return found
