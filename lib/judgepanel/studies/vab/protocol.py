"""The VAB set-comparison protocol: prompts, candidate orders and the planned calls.

A task's images are shown in one user message: a short header, then each image preceded by
its slot label ("Image A:"), then the instruction. Three questions exist: pick the best
(Top-1, ``vab_top1``), pick the worst (Bot-1, ``vab_bot1``) and pick both (TB-1,
``vab_tb1``, answered as ``BEST: <letter>`` / ``WORST: <letter>``). For two images TB-1
is not asked: it follows from Top-1 (the other image is the worst), which the metrics
derive.

Orders. An order is a tuple giving, for each slot, the index of the original image shown
there; the letters shown are always A, B, C... in slot order, and an answer is mapped back
to the original image through the order.

- Standard orders (repetitions ``0 .. n_orders-1``, 3 by default): the identity first,
  then seeded permutations, all distinct while distinct ones remain. For two images the
  identity (AB) and the swap (BA) always both appear; the third order repeats one of the
  two, chosen by the task's seeded generator, so that across tasks neither is favoured.
  ap@1 and pass^3 are computed on exactly these repetitions.
- Balanced orders (``balanced=True``; repetitions ``n_orders .. n_orders+k-1``): the k
  cyclic shifts of the identity, shift ``s`` showing original image ``(j + s) mod k`` in
  slot ``j``. These form a Latin design: every image appears in every slot exactly once,
  for every k (k calls; for k > 3 these are k of the k! permutations). Shift 0 repeats the
  identity as a fresh call, so the balanced block stands on its own and is independent
  of the standard block.

The order generator is seeded from ``(seed, task_id)`` only, so adding tasks or families
never changes another task's orders.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence
from typing import Any, TypedDict

import numpy as np
import pandas as pd

from judgepanel.core.calls import CallSpec, PromptSpec, make_spec
from judgepanel.core.rubric import messages_hash
from judgepanel.studies.common.choice_parse import LETTERS, QUESTIONS, parse_answer
from judgepanel.studies.common.rubric_plan import cached_bytes_url

Order = tuple[int, ...]

HEADER = (
    "You are an expert judge of visual aesthetics. The {k} images below show the same "
    "subject, each executed differently. They are labelled {letters}. Compare them on "
    "execution: composition, light and colour, focus and technical quality, and overall "
    "aesthetic impression."
)

INSTRUCTIONS: dict[str, str] = {
    "vab_top1": ("Which image is the best? Answer with one line in the form\nBEST: <letter>"),
    "vab_bot1": ("Which image is the worst? Answer with one line in the form\nWORST: <letter>"),
    "vab_tb1": (
        "Which image is the best and which is the worst? They must be two different images. "
        "Answer with two lines in the form\nBEST: <letter>\nWORST: <letter>"
    ),
}

MAX_TOKENS = 300


class VabAnswer(TypedDict):
    """A parsed VAB answer, as the parser returns it and the store keeps it (as JSON).

    ``best`` and ``worst`` are ORIGINAL labels (None for a field the prompt did not ask),
    ``shown_*`` the slot letters the judge named, ``order`` the original labels in slot
    order (``"C,A,B"``), against which the reader checks the order it recomputes.
    """

    best: str | None
    worst: str | None
    shown_best: str | None
    shown_worst: str | None
    order: str


def _task_rng(seed: int, task_id: str) -> np.random.Generator:
    digest = hashlib.sha256(f"vab-orders\x1f{seed}\x1f{task_id}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))


def standard_orders(k: int, task_id: str, seed: int = 0, n_orders: int = 3) -> list[Order]:
    """The identity, then seeded permutations, distinct while distinct ones remain.

    When ``n_orders`` exceeds the k! distinct orders (only for small k, e.g. two images and
    three orders), every order appears once and the rest are seeded repeats.
    """
    if k < 2:
        raise ValueError(f"a VAB set needs at least two images, got {k}")
    if n_orders < 1:
        raise ValueError(f"n_orders must be at least 1, got {n_orders}")
    rng = _task_rng(seed, task_id)
    identity = tuple(range(k))
    orders: list[Order] = [identity]
    n_distinct = 1
    for i in range(2, k + 1):
        n_distinct *= i
    if n_distinct <= 24:
        others = [p for p in itertools.permutations(range(k)) if p != identity]
        picks = rng.permutation(len(others))
        orders += [others[i] for i in picks[: n_orders - 1]]
    else:
        seen = {identity}
        while len(orders) < min(n_orders, n_distinct):
            perm = tuple(int(x) for x in rng.permutation(k))
            if perm not in seen:
                seen.add(perm)
                orders.append(perm)
    distinct = list(orders)
    while len(orders) < n_orders:
        orders.append(distinct[int(rng.integers(len(distinct)))])
    return orders


def balanced_orders(k: int) -> list[Order]:
    """The k cyclic shifts of the identity: every image in every slot exactly once."""
    return [tuple((j + s) % k for j in range(k)) for s in range(k)]


def task_orders(
    k: int, task_id: str, *, seed: int = 0, n_orders: int = 3, balanced: bool = True
) -> list[Order]:
    """All orders asked for one task, indexed by repetition (standard, then balanced)."""
    orders = standard_orders(k, task_id, seed, n_orders)
    if balanced:
        orders += balanced_orders(k)
    return orders


def order_labels(order: Order, labels: Sequence[str]) -> str:
    """The original labels in slot order, joined by commas (e.g. ``"C,A,B"``)."""
    return ",".join(labels[i] for i in order)


def to_original(shown: str | None, order: Order, labels: Sequence[str]) -> str | None:
    """Map a shown slot letter back to the original label of the image in that slot."""
    if shown is None:
        return None
    return labels[order[LETTERS.index(shown)]]


def slot_of(label: str, order: Order, labels: Sequence[str]) -> int:
    """The slot (0-based) where the image with original ``label`` is shown."""
    return order.index(list(labels).index(label))


def prompt_text(question: str, k: int) -> tuple[str, str]:
    """The header and the instruction for a question and set size."""
    if question not in INSTRUCTIONS:
        raise ValueError(f"unknown VAB question {question!r}; expected one of {QUESTIONS}")
    letters = ", ".join(LETTERS[:k])
    return HEADER.format(k=k, letters=letters), INSTRUCTIONS[question]


def build_messages(
    question: str, order: Order, labels: Sequence[str], image_urls: Sequence[str]
) -> list[dict[str, Any]]:
    """One user message: header, ``Image A:`` + image for each slot, instruction.

    Args:
        question: ``vab_top1``, ``vab_bot1`` or ``vab_tb1``.
        order: original image index per slot.
        labels: original labels (used only through ``image_urls``' order).
        image_urls: one URL (or placeholder) per ORIGINAL image, in label order.
    """
    k = len(order)
    header, instruction = prompt_text(question, k)
    content: list[dict[str, Any]] = [{"type": "text", "text": header}]
    for slot, original in enumerate(order):
        content.append({"type": "text", "text": f"Image {LETTERS[slot]}:"})
        content.append({"type": "image_url", "image_url": {"url": image_urls[original]}})
    content.append({"type": "text", "text": instruction})
    return [{"role": "user", "content": content}]


def prompt_hash(question: str, order: Order, labels: Sequence[str]) -> str:
    """SHA-256 of the prompt text with each image replaced by its original label."""
    placeholders = [f"<image {label}>" for label in labels]
    return messages_hash(build_messages(question, order, labels, placeholders))


def _parser(question: str, order: Order, labels: tuple[str, ...]):
    k = len(order)
    shown_order = order_labels(order, labels)

    def parse(text: str) -> VabAnswer:
        shown = parse_answer(text, question, k)
        return VabAnswer(
            best=to_original(shown.best, order, labels),
            worst=to_original(shown.worst, order, labels),
            shown_best=shown.best,
            shown_worst=shown.worst,
            order=shown_order,
        )

    return parse


def _builder(question: str, order: Order, labels: tuple[str, ...], images: tuple[bytes, ...]):
    def build() -> list[dict[str, Any]]:
        urls = [cached_bytes_url(data) for data in images]
        return build_messages(question, order, labels, urls)

    return build


def plan_calls(
    tasks: pd.DataFrame,
    families: dict[str, str],
    *,
    dataset: str = "vab",
    temperature: float = 0.3,
    n_orders: int = 3,
    balanced: bool = True,
    seed: int = 0,
    questions: Sequence[str] = QUESTIONS,
) -> list[CallSpec]:
    """Every call of the set-comparison study: task x family x question x order.

    Args:
        tasks: the loaded VAB tasks (``load_vab``).
        families: family name -> model id.
        dataset: dataset key in the store.
        temperature: sampling temperature.
        n_orders: standard orders per task (repetitions ``0 .. n_orders-1``).
        balanced: add the k cyclic shifts as repetitions ``n_orders ..``.
        seed: seeds the orders.
        questions: the questions to plan; TB-1 is never planned for two images.

    Returns:
        One :class:`CallSpec` per call; ``parse`` returns a :class:`VabAnswer` (``best``
        and ``worst`` in ORIGINAL labels, the shown letters and the order) and raises
        ``AnswerError``.
    """
    for question in questions:
        if question not in QUESTIONS:
            raise ValueError(f"unknown VAB question {question!r}; expected one of {QUESTIONS}")
    missing = [c for c in ("task_id", "n_images", "labels", "images") if c not in tasks.columns]
    if missing:
        raise ValueError(f"tasks table lacks columns: {', '.join(missing)}")
    specs: list[CallSpec] = []
    for task in tasks.itertuples(index=False):
        labels = tuple(task.labels)
        images = tuple(task.images)
        k = len(labels)
        orders = task_orders(k, task.task_id, seed=seed, n_orders=n_orders, balanced=balanced)
        # The prompts of a task, built once and asked of every family.
        prompts: list[tuple[int, PromptSpec]] = []
        for question in questions:
            if question == "vab_tb1" and k == 2:
                continue
            header, instruction = prompt_text(question, k)
            text_chars = len(header) + len(instruction) + k * len("Image A:")
            for rep, order in enumerate(orders):
                prompt = PromptSpec(
                    dataset=dataset,
                    item=task.task_id,
                    call_type=question,
                    prompt_hash=prompt_hash(question, order, labels),
                    build=_builder(question, order, labels, images),
                    parse=_parser(question, order, labels),
                    max_tokens=MAX_TOKENS,
                    temperature=temperature,
                    n_images=k,
                    text_chars=text_chars,
                )
                prompts.append((rep, prompt))
        for family, model in families.items():
            for rep, prompt in prompts:
                specs.append(make_spec(prompt, family=family, model=model, repetition=rep))
    return specs
