"""The VAB answer parser on adversarial answers."""

from __future__ import annotations

import pytest

from judgepanel.core.calls import AnswerError
from judgepanel.studies.common.choice_parse import parse_answer


@pytest.mark.parametrize(
    ("text", "k", "best", "worst"),
    [
        ("BEST: B\nWORST: C", 3, "B", "C"),
        ("**BEST:** B\n**WORST:** A", 3, "B", "A"),
        ("Best: Image C\n**Worst** - image a", 3, "C", "A"),
        ("best: b\nworst: c", 3, "B", "C"),
        ("BEST: B WORST: D", 4, "B", "D"),
        ("- **Best image:** (C)\n- **Worst image:** [A]", 3, "C", "A"),
        ("BEST = Image #2? No: BEST: D\nWORST: A", 4, "D", "A"),
        # The LAST answer line wins: the judge revised its answer.
        ("BEST: A\nWORST: B\nOn reflection:\nBEST: C\nWORST: A", 3, "C", "A"),
        # Commentary after the answer does not override it: prose is no answer line.
        ("BEST: D\nWORST: A\nNote: WORST: B would also be defensible.", 4, "D", "A"),
        ("I compared them.\n\n**Best**: Image B.\n**Worst**: Image E.", 5, "B", "E"),
        ("`BEST: F`\n`WORST: A`", 6, "F", "A"),
    ],
)
def test_tb1_reads_markdown_and_takes_the_last_answer_line(text, k, best, worst):
    ans = parse_answer(text, "vab_tb1", k)
    assert (ans.best, ans.worst) == (best, worst)


@pytest.mark.parametrize(
    ("text", "question", "k", "letter"),
    [
        ("C", "vab_top1", 3, "C"),
        ("  **b**  ", "vab_top1", 2, "B"),
        ("Image D.", "vab_bot1", 4, "D"),
        # Every noun a field may carry is also read in a bare answer.
        ("Photo B.", "vab_top1", 3, "B"),
        ("**Candidate c**", "vab_bot1", 3, "C"),
        ("BEST: A", "vab_top1", 2, "A"),
        ("WORST: image c", "vab_bot1", 3, "C"),
        ("Answer: **B**", "vab_top1", 3, "B"),
        ("Final answer - C", "vab_bot1", 3, "C"),
        ("BEST: I think it is C. BEST: C", "vab_top1", 3, "C"),
        # A TB-1 style reply to a Top-1 prompt is read by its BEST line only.
        ("BEST: B\nWORST: A", "vab_top1", 3, "B"),
        ("BEST: B\nWORST: A", "vab_bot1", 3, "A"),
    ],
)
def test_single_field_prompts_accept_bare_letters_and_fields(text, question, k, letter):
    ans = parse_answer(text, question, k)
    got = ans.best if question == "vab_top1" else ans.worst
    assert got == letter
    assert (ans.worst if question == "vab_top1" else ans.best) is None


@pytest.mark.parametrize(
    ("text", "question", "k", "message"),
    [
        ("They are all lovely in their own way.", "vab_top1", 3, "no BEST"),
        ("The best image is the second one.", "vab_top1", 3, "no BEST"),
        ("BEST: E", "vab_top1", 3, "out of range"),
        ("BEST: A\nWORST: D", "vab_tb1", 3, "out of range"),
        # The last BEST is out of range: no fallback to the earlier, valid one.
        ("BEST: A\nWORST: B\nOn reflection:\nBEST: Z", "vab_tb1", 3, "out of range"),
        # Two letters for one field on one answer line: ambiguous, not the last of them.
        ("BEST: A ... BEST: Z\nWORST: B", "vab_tb1", 3, "ambiguous BEST"),
        ("BEST: B or C", "vab_top1", 3, "ambiguous BEST"),
        ("BEST: B", "vab_tb1", 3, "WORST"),
        ("WORST: B", "vab_top1", 3, "no BEST"),
        ("BEST: B\nWORST: B", "vab_tb1", 3, "both best and worst"),
        ("Best: a close call between the two", "vab_top1", 2, "no BEST"),
        ("", "vab_bot1", 2, "no WORST"),
        ("bestow: A", "vab_top1", 3, "no BEST"),
    ],
)
def test_unreadable_answers_raise_answer_error(text, question, k, message):
    with pytest.raises(AnswerError, match=message):
        parse_answer(text, question, k)


def test_unknown_question_is_a_programming_error():
    with pytest.raises(ValueError, match="unknown VAB question"):
        parse_answer("BEST: A", "holistic", 3)
