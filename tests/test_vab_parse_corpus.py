"""The VAB answer parser on an adversarial corpus, compared with the official harness's rule.

``tests/data/vab_answers.yaml`` holds answers to the three VAB prompts, each with the parse
a careful reader gives it ("-" where no letter may be read). :func:`official_rule` is a
small re-implementation, written for this comparison, of the rule the benchmark's own
evaluation script applies (described in its docstring); no code of that script is used.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
import yaml

from judgepanel.core.calls import AnswerError
from judgepanel.studies.common.choice_parse import LETTERS, parse_answer

CORPUS: list[dict] = yaml.safe_load(
    (Path(__file__).parent / "data" / "vab_answers.yaml").read_text(encoding="utf-8")
)
QUESTIONS = {"top1": "vab_top1", "bot1": "vab_bot1", "tb1": "vab_tb1"}
UNREADABLE = "-"


def _render(kind: str, best: str | None, worst: str | None) -> str:
    """A parse as the corpus writes it: "B", or "B C" for TB-1."""
    return {"top1": best, "bot1": worst}.get(kind) or f"{best} {worst}"


def official_rule(text: str, kind: str, k: int) -> str:
    """The official harness's rule, for comparison.

    Each field is the FIRST match of ``\\bBEST:\\s*([A-Za-z])\\b`` (``WORST`` alike): the
    field name in upper case with the colon attached, optional white space, then one letter
    standing alone, of either case, upper-cased. A letter that is not one of the ``k``
    labels reads as no answer; TB-1 needs both fields and does not compare them.
    """
    labels = LETTERS[:k]

    def first(tag: str) -> str | None:
        m = re.search(rf"\b{tag}:\s*([A-Za-z])\b", text)
        letter = m.group(1).upper() if m else None
        return letter if letter is not None and letter in labels else None

    best, worst = first("BEST"), first("WORST")
    needed = {"top1": [best], "bot1": [worst], "tb1": [best, worst]}[kind]
    if any(v is None for v in needed):
        return UNREADABLE
    return _render(kind, best, worst)


def our_rule(text: str, kind: str, k: int) -> str:
    """This project's parser, in the corpus's notation."""
    try:
        answer = parse_answer(text, QUESTIONS[kind], k)
    except AnswerError:
        return UNREADABLE
    return _render(kind, answer.best, answer.worst)


def _id(case: dict) -> str:
    return f"{case['group']}:{case['text'][:40]!r}"


def test_the_corpus_is_large_varied_and_well_formed():
    assert len(CORPUS) >= 60
    groups = Counter(case["group"] for case in CORPUS)
    assert {"clean", "commentary", "reasoning", "markdown", "article", "ambiguous"} <= set(groups)
    for case in CORPUS:
        assert case["kind"] in QUESTIONS and 2 <= case["k"] <= 26, case
        expect = str(case["expect"])
        if expect != UNREADABLE:
            letters = expect.split()
            assert len(letters) == (2 if case["kind"] == "tb1" else 1), case
            assert all(x in LETTERS[: case["k"]] for x in letters), case


@pytest.mark.parametrize("case", CORPUS, ids=_id)
def test_our_parser_reads_every_case_as_expected(case):
    assert our_rule(case["text"], case["kind"], case["k"]) == str(case["expect"])


def test_where_the_official_rule_is_right_ours_is_right_too():
    """The official rule is right on the clean format; ours must never lose a case it
    gets right, and gains the markdown, case, article, commentary and revision cases."""
    official_right, ours_right = [], []
    for case in CORPUS:
        expect = str(case["expect"])
        if official_rule(case["text"], case["kind"], case["k"]) == expect:
            official_right.append(case)
        if our_rule(case["text"], case["kind"], case["k"]) == expect:
            ours_right.append(case)
    lost = [_id(c) for c in official_right if c not in ours_right]
    assert not lost
    assert len(ours_right) == len(CORPUS) > len(official_right)
    print(
        f"\nVAB parser corpus ({len(CORPUS)} answers): official rule {len(official_right)} "
        f"right, ours {len(ours_right)} right"
    )


def test_the_official_rule_is_reimplemented_faithfully():
    """Spot checks of the comparison rule on what it is known to do."""
    assert official_rule("BEST: B\nWORST: C", "tb1", 3) == "B C"
    assert official_rule("**BEST:** B", "top1", 3) == UNREADABLE  # markdown breaks it
    assert official_rule("Best: B", "top1", 3) == UNREADABLE  # case-sensitive
    assert official_rule("BEST: A close second is C.\nBEST: C", "top1", 3) == "A"  # first
    assert official_rule("BEST: A\nWORST: A", "tb1", 3) == "A A"  # never compared
    assert official_rule("BEST: E", "top1", 3) == UNREADABLE  # not a label
