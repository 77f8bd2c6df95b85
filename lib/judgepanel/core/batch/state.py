"""What one batch command keeps while it runs: the SDK client, the plan, the budget, what
it reserved and sent, and its counts (the state :mod:`.submit` and :mod:`.polling` share)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from judgepanel.core.batch.ingest import reask_history
from judgepanel.core.batch.lines import custom_id
from judgepanel.core.batch.options import BatchOptions
from judgepanel.core.batch.records import BatchBook, Chunk
from judgepanel.core.budget import Budget
from judgepanel.core.calls import CallSpec, key_digest
from judgepanel.core.client.counts import CallCounts
from judgepanel.core.client.outcome import ClientError
from judgepanel.core.client.secrets import endpoint_key
from judgepanel.core.config import Price
from judgepanel.core.providers import provider
from judgepanel.core.sendconfig import ClientOptions
from judgepanel.core.store import Store


class RunState:
    """One batch command: the SDK client, the endpoint's provider (the lines' format and
    their cost), the plan, the budget and the counters."""

    def __init__(
        self,
        specs: Sequence[CallSpec],
        store: Store,
        prices: Mapping[str, Price],
        options: ClientOptions,
        batch: BatchOptions,
        run: str,
        desc: str,
    ) -> None:
        import openai

        self.store = store
        self.book = BatchBook(store)
        self.prices = prices
        self.options = options
        self.batch = batch
        self.run = run
        self.desc = desc
        self.custom_id = custom_id
        self.provider = provider(options.endpoint.provider)
        self.by_id: dict[str, CallSpec] = {custom_id(s.key): s for s in specs}
        base_url = options.endpoint.base_url
        self.endpoint = base_url or "the endpoint"
        # Control calls (upload, create, poll) are not billed: the SDK's own retries suit
        # them, and a provider's 429 on polling only slows the poll down.
        self.client = openai.OpenAI(
            api_key=endpoint_key(options.endpoint),
            base_url=base_url,
            timeout=max(options.timeout, 120.0),
        )
        self.store_id = self.book.store_id()
        prior = store.total_committed() if options.max_total_cost is not None else 0.0
        self.budget = Budget(options.max_cost, options.max_total_cost, prior)
        self.t = CallCounts()
        self.sends: dict[str, int] = {}
        self.exhausted: set[str] = set()
        self.reserved: dict[str, float] = {}  # chunk -> amount reserved by this command
        self.stopped_by_budget = False
        self.aborted = ""
        self.started = time.monotonic()
        self.no_batch_price = sorted(
            {s.key.model for s in specs if self.prices[s.key.model].batch() is None}
        )

    def _datasets(self) -> set[str]:
        return {s.key.dataset for s in self.by_id.values()}

    def _pending(self) -> list[CallSpec]:
        """Planned calls neither stored as done nor in an open chunk, nor used up."""
        done: set[int] = set()
        for ds in self._datasets():
            done |= self.store.completed_digests(ds, include_failed=not self.options.retry_failed)
            done |= self.store.batched_digests(ds)
        return [
            s
            for cid, s in self.by_id.items()
            if key_digest(s.key) not in done and cid not in self.exhausted
        ]

    def _history(self, specs: Sequence[CallSpec]) -> dict[str, int]:
        return reask_history(self.store, specs, self.custom_id)

    def _spec(self, cid: str, chunk: Chunk) -> CallSpec:
        spec = self.by_id.get(cid)
        if spec is None:
            raise ClientError(
                f"batch chunk {chunk.chunk} (run {chunk.run!r}) holds the call {cid}, which "
                "this plan does not make; resume it with the run that submitted it"
            )
        return spec

    def _settle(self, chunk: Chunk, actual: float) -> None:
        amount = self.reserved.pop(chunk.chunk, None)
        if amount is not None:
            self.budget.settle(amount, actual)
        else:  # reserved by an earlier command: its bound leaves the store's total
            self.budget.prior += actual - chunk.bound

    def _poll_open(self) -> tuple[str, bool] | None:
        """Poll each open chunk once and ingest those that ended (see :mod:`.polling`)."""
        raise NotImplementedError
