"""Prompt caching, as a provider reports it: the longest prompt prefix seen recently.

A request's prompt is its sequence of content parts in message order (for the usual
layout: the system text, then each user part, text or image). The server hashes the chain
of part-prefixes, model first, so that two requests share a key exactly when they share
the model and a prefix of whole parts. If the longest prefix of a request was sent by one
of the last ``window`` answered requests, its tokens are reported as cached: text priced
with ``text_tokens`` on the prefix's characters, images with ``image_tokens`` (as in
``ParsedChat.prompt_tokens``), and the three tokens per message of the whole request
attributed to the first part. A whole repeated request is therefore cached in full.

The window counts answered requests, not seconds, so that what a sequential client is
billed does not depend on timing; memory holds the keys of the window's requests only.
Unlike OpenAI there is no 1,024-token minimum or 128-token granularity.
"""

from __future__ import annotations

import hashlib
from collections import deque

from judgepanel_sim.judges.protocol import ParsedChat, text_tokens


def prefix_keys(chat: ParsedChat) -> list[bytes]:
    """The key of each prefix of ``chat``'s parts, shortest first (one per part)."""
    h = hashlib.blake2b(chat.model.encode("utf-8"), digest_size=16).digest()
    keys = []
    for identity, _, _ in chat.segments:
        h = hashlib.blake2b(h + b"\x1e" + identity.encode("utf-8"), digest_size=16).digest()
        keys.append(h)
    return keys


def prefix_tokens(chat: ParsedChat, parts: int) -> int:
    """Prompt tokens of the first ``parts`` parts (0 for none), at most the whole prompt."""
    if parts <= 0:
        return 0
    head = chat.segments[:parts]
    tokens = (
        text_tokens(sum(chars for _, chars, _ in head))
        + 3 * chat.n_messages
        + sum(image for _, _, image in head)
    )
    return min(tokens, chat.prompt_tokens())


class PromptCache:
    """The prefixes of the last ``window`` answered requests."""

    def __init__(self, window: int) -> None:
        if window < 1:
            raise ValueError(f"window must be >= 1, got {window}")
        self.window = window
        self.answered = 0
        self._last_seen: dict[bytes, int] = {}  # prefix key -> number of its latest request
        self._recent: deque[tuple[int, list[bytes]]] = deque()

    def __len__(self) -> int:
        """Prefix keys held."""
        return len(self._last_seen)

    def cached_parts(self, keys: list[bytes]) -> int:
        """How many leading parts were seen within the window."""
        oldest = self.answered - self.window  # requests numbered above this are in it
        for k in range(len(keys), 0, -1):
            if self._last_seen.get(keys[k - 1], oldest) > oldest:
                return k
        return 0

    def record(self, keys: list[bytes]) -> None:
        """Remember an answered request's prefixes; forget those of requests it displaces."""
        self.answered += 1
        for key in keys:
            self._last_seen[key] = self.answered
        self._recent.append((self.answered, keys))
        while self._recent and self._recent[0][0] <= self.answered - self.window:
            number, old = self._recent.popleft()
            for key in old:
                if self._last_seen.get(key) == number:
                    del self._last_seen[key]

    def answer(self, chat: ParsedChat) -> int:
        """The cached tokens of an answered request, which is then remembered."""
        keys = prefix_keys(chat)
        cached = prefix_tokens(chat, self.cached_parts(keys))
        self.record(keys)
        return cached
