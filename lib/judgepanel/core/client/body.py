"""Images for request bodies: each read and encoded once per repetition group.

The request body itself is the provider's (see :mod:`judgepanel.core.providers`).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from judgepanel.core.prompts import image_data_url


@lru_cache(maxsize=32)
def cached_data_url(path: str) -> str:
    """:func:`judgepanel.core.prompts.image_data_url`, remembering the most recent images.

    Plans put the repetitions of one image next to each other, so a small cache turns
    k + 5R file reads and base64 encodings per image and family into one.
    """
    return image_data_url(Path(path))
