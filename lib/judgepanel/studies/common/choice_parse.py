"""Reading a judge's choice among lettered images: VAB's set comparisons, the pairwise study.

The parser was written for VAB's prompts (its kinds keep VAB's names) and is shared by
every study that asks a judge to pick one of several lettered images: the pairwise study
reads its answers with :func:`parse_best`.

The reference harness reads the FIRST ``BEST:`` (upper case, colon attached) followed by
one letter. That is right for the format it asks for, but it cannot read markdown
(``**BEST:** B``), other cases (``Best: C``) or a bare letter, it reads the article of
"BEST: A close second..." as image A, and it keeps a first draft over a revised answer.
A last-match rule fixes the revision but lets commentary after the answer override it
("BEST: D\\nWORST: A\\nNote: WORST: B would also be defensible" read as B). This parser:

1. finds field statements (``BEST``/``WORST``, any case and markdown, an optional noun
   such as "image", then a letter) and ANSWER LINES: lines holding nothing but field
   statements, decoration and filler words ("final answer");
2. takes a field from the LAST answer line that names it (the prompt asks for the answer
   as a line of its own, and a revision comes last); a field named only inside prose is
   read when every mention agrees;
3. calls an answer unreadable, not a guess, when it is genuinely ambiguous: two letters
   for one field on its answer line or across its prose mentions, or an alternative
   ("BEST: B or C", "B/C");
4. reads an upper-case "A" followed by a lower-case word as the English article ("A close
   second"), unless the word is one that follows a label ("A is", "A has", "A for");
   "I" followed by a word is the pronoun; a lower-case letter counts only after a noun
   ("image a") or at the end of a clause.

A letter must be in range for the set size. For single-field prompts (Top-1, Bot-1) an
``Answer: C`` statement, a bare letter (``C``, ``Image C.``) or a bare letter on the last
line is also accepted.

Letters here are SHOWN letters (slot letters). Mapping them back to the original images is
the asking study's job (VAB's ``protocol.to_original``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from judgepanel.core.calls import AnswerError

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

QUESTIONS: tuple[str, ...] = ("vab_top1", "vab_bot1", "vab_tb1")
"""The questions a VAB prompt asks (its call kind): pick the best, the worst, both."""

# Decoration allowed between a field name and its letter: markdown emphasis, colons, dashes,
# brackets, quotes, "=" and "#".
_GAP = r"[\s*_:\uff1a\-\u2013\u2014=#>\[\]()\"'`|]*"
# Words after which an upper-case "A" is a label, not the article ("A is the best").
_LABEL_WORDS = (
    "is|was|has|had|wins|won|beats|edges|looks|seems|stands|feels|shows|offers|remains|"
    "would|could|should|will|may|might|can|does|did|and|or|but|because|since|as|for|over|"
    "with|by|then|too|also|clearly|narrowly|slightly|overall|here|again"
)
# An upper-case letter standing alone; not the pronoun "I" nor the article "A" before a
# word. No named groups, so that it can be used twice in one pattern.
_UPPER = rf"(?!I\s+[a-z])(?!A\s+(?!(?:{_LABEL_WORDS})\b)[a-z])[A-Z](?![A-Za-z0-9])"
# A lower-case letter at the end of a clause (so that "Best: a close call" is no image A).
_LOWER = r"[a-z](?=[\s*_)\]\"'`.,;!]*(?:$|[.,;!]|\n))"
# Nouns that may stand between a field name (or nothing, in a bare answer) and its letter.
_NOUNS: tuple[str, ...] = ("image", "img", "picture", "photo", "option", "candidate")
# Words that may qualify a field before its letter ("Best overall: C").
_QUALIFIERS: tuple[str, ...] = ("overall", "choice", "pick", "answer")
# Words an answer line may hold besides its field statements ("Final answer: BEST: C").
_FILLER = frozenset({"final", "answer", "answers", "my", "verdict", "choice", "choices"})


# Field names are matched case-insensitively by rewriting them as character classes, so the
# letter patterns keep their case sensitivity.
def _ci(word: str) -> str:
    return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else re.escape(c) for c in word)


_NOUN_WORDS = "|".join(_ci(w) for w in _NOUNS)
_NOUN = rf"(?:(?:{_NOUN_WORDS})\s*(?:{_ci('no')}\.?|{_ci('number')}|#)?{_GAP})"
_QUALIFIER = rf"(?:(?:{'|'.join(_ci(w) for w in _QUALIFIERS)})(?![A-Za-z]){_GAP})"


def _compile(name: str) -> re.Pattern[str]:
    return re.compile(
        rf"(?<![A-Za-z]){_ci(name)}(?![A-Za-z]){_GAP}{_QUALIFIER}?"
        rf"(?:{_NOUN}(?P<after_noun>{_UPPER}|[a-z](?![A-Za-z0-9])(?!\s+[a-z]{{2,}}))"
        rf"|(?P<up>{_UPPER})|(?P<low>{_LOWER}))"
    )


_FIELDS: dict[str, re.Pattern[str]] = {
    "BEST": _compile("best"),
    "WORST": _compile("worst"),
    "ANSWER": _compile("answer"),
}
# A second letter offered as an alternative right after a field's letter: "B or C", "B/C".
_ALTERNATIVE = re.compile(rf"\s*(?:/|&|\b[oO][rR]\b|\b[aA][nN][dD]\b)[\s*_]*{_NOUN}?(?:{_UPPER})")
_BARE = re.compile(
    rf"^[\s*_\"'`(\[]*(?:(?:{'|'.join(_NOUNS)})\s*)?(?P<letter>[A-Za-z])[\s*_\"'`)\].!]*$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ShownAnswer:
    """The slot letters a judge named (``None`` for a field the prompt did not ask)."""

    best: str | None
    worst: str | None


@dataclass(frozen=True)
class _Statement:
    """One field statement: its field, letter, line, and how it stands."""

    field: str
    letter: str
    line: int
    own_line: bool
    alternative: bool


def _statements(text: str) -> list[_Statement]:
    """Every field statement of ``text``, each marked as on an answer line or in prose."""
    out: list[_Statement] = []
    for number, line in enumerate(text.splitlines()):
        found = []
        for field, pattern in _FIELDS.items():
            for m in pattern.finditer(line):
                letter = m.group("after_noun") or m.group("up") or m.group("low")
                found.append(
                    (field, letter.upper(), m.span(), bool(_ALTERNATIVE.match(line, m.end())))
                )
        if not found:
            continue
        rest = list(line)
        for _, _, (start, end), _ in found:
            rest[start:end] = " " * (end - start)
        words = re.findall(r"[A-Za-z0-9]+", "".join(rest))
        own_line = all(w.lower() in _FILLER for w in words)
        out.extend(_Statement(f, letter, number, own_line, alt) for f, letter, _, alt in found)
    return out


def _field_letter(statements: list[_Statement], field: str) -> str | None:
    """The letter ``field`` names: its last answer line, else its prose mentions if they
    agree; None if it is never named.

    Raises:
        AnswerError: the field is named ambiguously.
    """
    named = [s for s in statements if s.field == field]
    on_lines = [s for s in named if s.own_line]
    if on_lines:
        last = on_lines[-1].line
        named = [s for s in on_lines if s.line == last]
    if not named:
        return None
    letters = sorted({s.letter for s in named})
    if len(letters) > 1 or any(s.alternative for s in named):
        where = "on its answer line" if on_lines else "in the answer"
        raise AnswerError(f"ambiguous {field}: {where} it names more than one image")
    return letters[0]


def _bare_letter(text: str) -> str | None:
    """A bare letter (``C``, ``Image C.``): the whole answer, or its last line."""
    lines = [line for line in text.splitlines() if line.strip()]
    for candidate in (text.strip(), lines[-1].strip() if lines else ""):
        m = _BARE.match(candidate)
        if m:
            return m.group("letter").upper()
    return None


def _check_range(letter: str, k: int, field: str) -> str:
    if letter not in LETTERS[:k]:
        raise AnswerError(
            f"{field} letter {letter!r} is out of range for {k} images "
            f"(expected one of {', '.join(LETTERS[:k])})"
        )
    return letter


def parse_answer(text: str, question: str, k: int) -> ShownAnswer:
    """Read the slot letters from a judge's answer (the rule is in the module docstring).

    Args:
        text: the assistant's text.
        question: ``vab_top1``, ``vab_bot1`` or ``vab_tb1``.
        k: number of images shown.

    Returns:
        The shown letters; ``worst`` is ``None`` for Top-1 and ``best`` for Bot-1.

    Raises:
        AnswerError: no readable letter, an ambiguous one, a letter out of range, or
            (TB-1, k >= 3) the same image named best and worst.
    """
    if question not in QUESTIONS:
        raise ValueError(f"unknown VAB question {question!r}; expected one of {QUESTIONS}")
    if not 2 <= k <= len(LETTERS):
        raise ValueError(f"set size {k} out of range")
    text = text or ""
    statements = _statements(text)
    if question == "vab_tb1":
        best = _field_letter(statements, "BEST")
        worst = _field_letter(statements, "WORST")
        missing = [n for n, v in (("BEST", best), ("WORST", worst)) if v is None]
        if missing:
            raise AnswerError(f"no {' or '.join(missing)} letter found in the answer")
        assert best is not None and worst is not None
        best = _check_range(best, k, "BEST")
        worst = _check_range(worst, k, "WORST")
        if best == worst and k >= 3:
            raise AnswerError(f"the same image {best} was named both best and worst")
        return ShownAnswer(best, worst)
    field = "BEST" if question == "vab_top1" else "WORST"
    letter = _field_letter(statements, field)
    if letter is None:
        letter = _field_letter(statements, "ANSWER")
    if letter is None:
        letter = _bare_letter(text)
    if letter is None:
        raise AnswerError(f"no {field} letter found in the answer")
    letter = _check_range(letter, k, field)
    if question == "vab_top1":
        return ShownAnswer(letter, None)
    return ShownAnswer(None, letter)


def parse_best(text: str, k: int = 2) -> str:
    """The slot letter a judge named best among ``k`` images (a Top-1 answer).

    Raises:
        AnswerError: as :func:`parse_answer` for ``vab_top1``.
    """
    best = parse_answer(text, "vab_top1", k).best
    assert best is not None
    return best
