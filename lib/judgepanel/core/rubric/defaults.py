"""The prompt texts of a rubric that brings none of its own.

A rubric file may carry ``prompts`` (and a holistic ``text``); without them its requests
are built from these templates, so a new rubric needs no prompt engineering to be sent.
"""

from __future__ import annotations

DEFAULT_ROLE = "You are an expert image rater."
"""The role framing of a dimension that declares none."""

SYSTEM = "{role} You score one image on a single dimension of a rubric and always answer in JSON."
"""The system message of a dimension prompt."""

USER_HEAD = "Rubric dimension: {title} ({asks}).\n"
TIERS_BLOCK = "Score tiers, each with the criteria an image at that tier shows:\n{tiers}\n"
"""Shown only for a dimension with tiers."""
USER_TAIL = (
    "Score the image below on {title} only, {scale_text}.\n"
    'Reply with JSON only, exactly in the form {{"score": {answer_form}, '
    '"reason": "<one sentence>"}}.'
)

HOLISTIC = (
    "Rate the overall quality of this image.\n"
    "Use an integer scale from {min} to {max}.\n"
    'Reply with JSON only, exactly in the form {{"score": <integer {min}-{max}>, '
    '"reason": "<one sentence>"}}.\n'
    "Do not add any other text."
)
"""The holistic question of a rubric that declares a holistic scale but no text."""
