"""The client: send planned calls to an OpenAI-compatible endpoint, paced, and checkpoint them.

One module per job: :mod:`.secrets` (the key, scrubbing), :mod:`.body` (images, read once),
:mod:`.transport` (the SDK and one HTTP attempt), :mod:`.answers` (one call's tally),
:mod:`.pacing` (rate limits, headers, 429s, adaptive concurrency), :mod:`.runner` (the
workers) and :mod:`.entry` (:func:`run_calls`). ``ClientOptions``, the one configuration
of all of them, is declared in `judgepanel.core.sendconfig`, and the
:class:`~judgepanel.core.endpoint.Endpoint` it sends to in `judgepanel.core.endpoint`. What
a request and an answer look like on the wire, and what a usage costs, is the endpoint's
provider's (`judgepanel.core.providers`).

The SDK's own retries are switched off so that every attempt is ours: counted, shown in the
progress line and billed in the store. Before a call is sent its reservation is written to
the store, so a call in flight when the process dies is known afterwards. The API key comes
from the environment variable the endpoint names (``OPENAI_API_KEY`` unless told), read
when a client opens; every text kept from a response passes through :func:`scrub`.
"""

from judgepanel.core.client.answers import reask_seed
from judgepanel.core.client.body import cached_data_url
from judgepanel.core.client.entry import pending_calls, run_calls, run_calls_async
from judgepanel.core.client.outcome import ClientError, RunAborted, RunSummary
from judgepanel.core.client.pacing import Lane, Pacer, RateHeaders
from judgepanel.core.client.runner import FAILURE_SHARE_SAMPLE, repetition_groups
from judgepanel.core.client.secrets import api_key_from_env, endpoint_key, scrub, scrub_value
from judgepanel.core.client.transport import http_transport, open_client

__all__ = [
    "FAILURE_SHARE_SAMPLE",
    "ClientError",
    "Lane",
    "Pacer",
    "RateHeaders",
    "RunAborted",
    "RunSummary",
    "api_key_from_env",
    "cached_data_url",
    "endpoint_key",
    "http_transport",
    "open_client",
    "pending_calls",
    "reask_seed",
    "repetition_groups",
    "run_calls",
    "run_calls_async",
    "scrub",
    "scrub_value",
]
