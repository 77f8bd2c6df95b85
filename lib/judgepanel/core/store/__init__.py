"""The checkpoint store: one SQLite file, one row per completed call.

Every call is written the moment it completes, in its own transaction, by the one thread
that runs the client's event loop, so a call that is checkpointed is never sent again and
a crash loses nothing that was committed. Analyses read only this file.

Before a call is sent, its reservation (the most it can cost) is written to ``pending`` in
its own transaction, and the row is removed in the transaction that records the outcome.
A row still in ``pending`` when the next run takes its dataset's writer lock was in flight
when a process died: it moves to ``interrupted``, whose bounds stay counted as "possibly billed,
unanswered" spend, because the endpoint may have billed an answer that never arrived.

A failed call is either ``retryable`` (connection errors, timeouts, 429 and 5xx once its
attempts were used up: a later run may succeed, and a plain resume sends it again) or
``final`` (an unreadable answer after its re-asks, any other 4xx, a request that could not
be built: only ``--retry-failed`` sends it again). Cost, tokens, attempts and billed answers
accumulate over every send of a call, so a retried call never hides what it cost before.

Cost is kept twice: ``cost`` is our estimate from the token counts and the price table
(cached prompt tokens at the cached-input price), ``reported_cost`` what the provider itself
reported as ``usage.cost`` (OpenRouter does; ``NULL`` where it did not), so the two can be
compared. ``samples_per_request`` says whether a row was drawn alone or as one of ``n``
choices of a request, whose prompt is billed once.

Durability: the file is in WAL mode with ``synchronous=NORMAL``. In WAL mode a commit
appends to the write-ahead log; with NORMAL the log is synced to disk at checkpoints rather
than at every commit. A killed process (``kill -9``) therefore loses nothing it committed,
because the log already sits in the operating system's cache; only a power cut or kernel
crash can lose the last few commits, and those calls would simply be sent again on resume
(the database itself stays consistent). That trade buys a commit cost small enough to write
every call separately at full request rate.

The package splits the store by job: :mod:`.schema` (tables, versions, migrations),
:mod:`.writer` (reservations and outcomes), :mod:`.frames` (stored keys and frames),
:mod:`.summary` (cost accounting and the typed summary), :mod:`.imports` (answers made
elsewhere, with their provenance), :mod:`.locks` (the writer locks) and :mod:`.file`
(:class:`Store`, opening the file and joining the jobs).
"""

from judgepanel.core.store.file import Store
from judgepanel.core.store.imports import ImportedRow, ImportOutcome, ImportSource
from judgepanel.core.store.schema import (
    FAILURE_KINDS,
    OPEN_CHUNK_STATES,
    SCHEMA_VERSION,
    StoreError,
    failure_of_reason,
)
from judgepanel.core.store.summary import (
    CallCount,
    FailureCount,
    ModelCost,
    RubricCount,
    StoreSummary,
    Tokens,
)
from judgepanel.core.store.writer import (
    COLUMNS,
    RESULT_FIELDS,
    CallResult,
    Reservations,
    key_text,
    utc_now,
)

__all__ = [
    "COLUMNS",
    "FAILURE_KINDS",
    "OPEN_CHUNK_STATES",
    "RESULT_FIELDS",
    "SCHEMA_VERSION",
    "CallCount",
    "CallResult",
    "FailureCount",
    "ImportOutcome",
    "ImportSource",
    "ImportedRow",
    "ModelCost",
    "Reservations",
    "RubricCount",
    "Store",
    "StoreError",
    "StoreSummary",
    "Tokens",
    "failure_of_reason",
    "key_text",
    "utc_now",
]
