"""Batch mode: a plan's calls sent as batch files, at a provider's batch price.

:mod:`.lines` builds the request lines and files, :mod:`.records` keeps each file's state
in the store, :mod:`.results` reads answers back, :mod:`.ingest` writes a finished chunk's
answers, :mod:`.provider` runs a batch command against a provider's batch API
(:func:`run_batches`; its state, submitting and polling in :mod:`.state`, :mod:`.submit`
and :mod:`.polling`, its options in :mod:`.options`), and :mod:`.offline` writes and reads
the files of ``vllm run-batch`` for servers without one. The lines' format is the
endpoint's provider's (:mod:`judgepanel.core.providers`).
"""

from judgepanel.core.batch.ingest import FaultHook, batch_price
from judgepanel.core.batch.lines import MAX_BYTES, MAX_LINES, custom_id
from judgepanel.core.batch.options import BatchOptions
from judgepanel.core.batch.provider import run_batches
from judgepanel.core.batch.records import BatchBook, Chunk
from judgepanel.core.batch.results import ResultFileError

__all__ = [
    "MAX_BYTES",
    "MAX_LINES",
    "BatchBook",
    "BatchOptions",
    "Chunk",
    "FaultHook",
    "ResultFileError",
    "batch_price",
    "custom_id",
    "run_batches",
]
