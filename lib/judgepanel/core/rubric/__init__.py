"""The rubric as data: dimensions, scales, prompts and hashes read from a YAML file."""

from judgepanel.core.rubric.load import (
    PINNED_FILES,
    RUBRIC_FILES,
    SHAM_FILE,
    RubricError,
    default_rubric_path,
    load_rubric,
    sha256sums_text,
)
from judgepanel.core.rubric.model import Dimension, Holistic, Rubric, Scale, messages_hash

__all__ = [
    "PINNED_FILES",
    "RUBRIC_FILES",
    "SHAM_FILE",
    "Dimension",
    "Holistic",
    "Rubric",
    "RubricError",
    "Scale",
    "default_rubric_path",
    "load_rubric",
    "messages_hash",
    "sha256sums_text",
]
