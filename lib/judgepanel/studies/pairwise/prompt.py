"""The pairwise prompt, made from the rubric: which of the two images is better on ...

One prompt per rubric question: the holistic one ("better overall", where the rubric asks
one) and each dimension ("better on <title> only", with the dimension's role, what it asks
and its tiers of criteria as the scoring prompt shows them). Each pair is asked in both
orders, as VAB asks a set in several: order 0 shows ``image_a`` as Image A, order 1 shows
``image_b`` there. The answer is one line, ``BEST: <letter>``, read by the choice parser
VAB reads its answers with (:func:`judgepanel.studies.common.choice_parse.parse_best`) and
mapped back from the slot letter to the image, so that position bias is measured on the
slot (the same answer in both orders is position-consistent).
"""

from __future__ import annotations

from typing import Any, TypedDict

from judgepanel.core.rubric import Rubric
from judgepanel.core.rubric.model import messages_hash
from judgepanel.studies.common.choice_parse import parse_best

PAIR_CALL_TYPES: dict[str, str] = {"holistic": "pair_holistic", "dimension": "pair_dimension"}
"""The stored call type of a pairwise question, by the rubric question it comes from."""

SLOTS = ("A", "B")

HOLISTIC_HEAD = (
    "Compare the overall aesthetic quality of two photographs, judging each as a whole, "
    "as an attentive viewer would."
)
DIMENSION_SYSTEM = "{role} You compare two images on a single dimension of a fixed rubric."
DIMENSION_HEAD = "Rubric dimension: {title} ({asks})."
TIERS_HEAD = "Criteria by tier, from an image at that tier:\n{tiers}"
QUESTION = (
    "Which of the two images is better {on}? Reply with one line, exactly in the form "
    "BEST: <A or B>."
)


class PairAnswer(TypedDict):
    """A parsed pairwise answer: the image chosen, as ``a``/``b`` of the pair, the slot
    letter shown, and the order it was asked in."""

    winner: str
    shown: str
    order: int


def _content(head: str, question: str, urls: tuple[str, str]) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = [{"type": "text", "text": head}]
    for slot, url in zip(SLOTS, urls, strict=True):
        content.append({"type": "text", "text": f"Image {slot}:"})
        content.append({"type": "image_url", "image_url": {"url": url}})
    content.append({"type": "text", "text": question})
    return content


def pair_messages(
    rubric: Rubric, question: str, dimension: str, urls: tuple[str, str]
) -> list[dict[str, Any]]:
    """The messages asking which of two images (``urls``, in slot order) is better.

    Args:
        question: ``holistic`` or ``dimension`` (the rubric question it comes from).
        dimension: the dimension's key (``""`` for holistic).
    """
    if question == "holistic":
        if rubric.holistic is None:
            raise ValueError(f"{rubric.source}: the rubric asks no holistic question")
        question = QUESTION.format(on="overall")
        return [{"role": "user", "content": _content(HOLISTIC_HEAD, question, urls)}]
    dim = rubric.dimensions[dimension]
    head = DIMENSION_HEAD.format(title=dim.title, asks=dim.asks)
    if dim.tiers:
        head += "\n" + TIERS_HEAD.format(tiers=dim.tiers_text())
    question = QUESTION.format(on=f"on {dim.title} only")
    return [
        {"role": "system", "content": DIMENSION_SYSTEM.format(role=dim.role).strip()},
        {"role": "user", "content": _content(head, question, urls)},
    ]


def pair_prompt_hash(rubric: Rubric, question: str, dimension: str) -> str:
    """SHA-256 of the prompt with the images left out (the same in both orders: the order
    is the call's repetition)."""
    return messages_hash(pair_messages(rubric, question, dimension, ("<image A>", "<image B>")))


def read_pair_answer(text: str, order: int) -> PairAnswer:
    """The image a judge chose, mapped from the slot letter through the order asked.

    Raises:
        AnswerError: the choice parser read no single letter A or B.
    """
    shown = parse_best(text, 2)
    first = shown == "A"
    winner = ("a" if first else "b") if order == 0 else ("b" if first else "a")
    return PairAnswer(winner=winner, shown=shown, order=order)
