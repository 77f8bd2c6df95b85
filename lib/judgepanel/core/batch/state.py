"""What one batch command keeps while it runs: the SDK client, the plan, the budget, what
it reserved and sent, and its counts (the state :mod:`.submit` and :mod:`.polling` share)."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence

from judgepanel.core.batch.ingest import reask_history
from judgepanel.core.batch.lines import custom_id
from judgepanel.core.batch.options import BatchOptions
from judgepanel.core.batch.records import BatchBook, Chunk
from judgepanel.core.budget import Budget
from judgepanel.core.calls import CallSpec
from judgepanel.core.client.counts import CallCounts
from judgepanel.core.client.outcome import ClientError
from judgepanel.core.client.secrets import endpoint_key
from judgepanel.core.config import Price
from judgepanel.core.providers import provider
from judgepanel.core.sendconfig import ClientOptions
from judgepanel.core.store import Store


class RunState:
    """One batch command: the SDK client, the endpoint's provider (the lines' format and
    their cost), the plan, the budget and the counters.

    What the store holds of the plan is read in one query (``done``: the digests
    :func:`run_batches` read before making it) and read again only after this command
    wrote to the store (a chunk planned, ingested or abandoned): a plan stored already
    is checked once.
    """

    def __init__(
        self,
        specs: Sequence[CallSpec],
        store: Store,
        prices: Mapping[str, Price],
        options: ClientOptions,
        batch: BatchOptions,
        run: str,
        desc: str,
        done: set[int] | None = None,
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
        self.plan: Sequence[CallSpec] = specs
        self.datasets: frozenset[str] = frozenset(s.key.dataset for s in specs)
        self._done = done
        self._by_id: dict[str, CallSpec] = {}  # custom_id -> call, of the chunks sent
        self._every_id = False  # whether _by_id names every call of the plan
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
        models = {s.key.model for s in specs}
        self.no_batch_price = sorted(m for m in models if self.prices[m].batch() is None)

    def stored(self) -> set[int]:
        """Digests of the plan's datasets' calls stored as done or in an open chunk (read
        from the store unless nothing was written since the last read)."""
        if self._done is None:
            retry = self.options.retry_failed
            done = self.store.completed_digests(self.datasets, include_failed=not retry)
            self._done = done | self.store.batched_digests(self.datasets)
        return self._done

    def changed(self) -> None:
        """The store was written (a chunk planned, ingested or abandoned): read it again."""
        self._done = None

    def _pending(self) -> list[CallSpec]:
        """Planned calls neither stored as done nor in an open chunk, nor used up."""
        done = self.stored()
        left = [s for s in self.plan if s.key.digest not in done]
        if self.exhausted:
            left = [s for s in left if self.custom_id(s.key) not in self.exhausted]
        return left

    def sent_as(self, lines: Iterable[tuple[str, CallSpec]]) -> None:
        """Remember the calls this command put in a chunk, by custom_id (to match their
        results without naming every call of the plan)."""
        self._by_id.update(lines)

    def _history(self, specs: Sequence[CallSpec]) -> dict[str, int]:
        return reask_history(self.store, specs, self.custom_id)

    def _spec(self, cid: str, chunk: Chunk) -> CallSpec:
        spec = self._by_id.get(cid)
        if spec is None and not self._every_id:  # a chunk of an earlier command
            self._by_id = {self.custom_id(s.key): s for s in self.plan}
            self._every_id = True
            spec = self._by_id.get(cid)
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
