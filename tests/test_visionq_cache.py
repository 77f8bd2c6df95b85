"""The composite cache: one render per (question, rotation), bounded, and never stale."""

from __future__ import annotations

import multiprocessing
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import pandas as pd
import pytest
from PIL import Image

from judgepanel.core.config import Price
from judgepanel.core.endpoint import Endpoint
from judgepanel.core.sendconfig import ClientOptions
from judgepanel.studies.visionq import (
    CompositeCache,
    composite_url,
    file_identity,
    plan_calls,
    protocol,
)

FAMILIES = {f: f"sim-{f}-v1" for f in ("aurora", "basalt", "cobalt", "dune", "ember")}


@pytest.fixture()
def questions(tmp_path) -> pd.DataFrame:
    rows = []
    for q, n in enumerate((2, 3, 4)):
        qid = f"cvpr2025_000{q}__fig_1__row_1"
        rel, files = [], []
        for i in range(n):
            path = tmp_path / qid / f"bbox_{i}.png"
            path.parent.mkdir(parents=True, exist_ok=True)
            Image.new("RGB", (64, 48), (30 * (i + 1), 60 + 20 * q, 150)).save(path)
            rel.append(f"{qid}/{path.name}")
            files.append(str(path))
        rows.append(
            {
                "id": qid,
                "question": "Which method demonstrates better sharpness?",
                "n_choices": n,
                "image_files": files,
                "image_paths": rel,
            }
        )
    return pd.DataFrame(rows)


def _url(spec) -> str:
    return spec.build()[0]["content"][0]["image_url"]["url"]


def test_each_composite_is_rendered_once_for_all_families(questions):
    cache = CompositeCache()
    specs = plan_calls(questions, FAMILIES, cache=cache)
    assert len(specs) == (2 + 3 + 4) * 5
    urls = {}
    for spec in specs:
        urls.setdefault((spec.key.item, spec.key.repetition), set()).add(_url(spec))
    stats = cache.stats()
    assert stats.misses == 9 == len(urls)  # 2 + 3 + 4 rotations
    # the first composite is rendered by its first lookup; every later one was started
    # ahead by the builds before it, so all its lookups are served (or wait for it)
    assert stats.hits == len(specs) - 1
    assert all(len(u) == 1 for u in urls.values()), "every family sees the same composite"
    # the cached composite is the one rendered afresh from the rotated crops
    spec = next(
        s for s in specs if s.key.repetition == 1 and s.key.item.endswith("2__fig_1__row_1")
    )
    files = questions.iloc[2]["image_files"]
    assert _url(spec) == composite_url([files[1], files[2], files[3], files[0]])


def test_lru_bounds_by_entries_and_bytes():
    cache = CompositeCache(max_entries=2, max_bytes=25)
    built = []

    def make(value):
        def build():
            built.append(value)
            return value

        return build

    assert cache.get("a", make("a" * 10)) == "a" * 10
    cache.get("b", make("b" * 10))
    cache.get("a", make("never"))  # a hit makes "a" the most recent
    cache.get("c", make("c" * 10))  # over both bounds: "b" (least recent) goes
    assert built == ["a" * 10, "b" * 10, "c" * 10]
    assert cache.stats().evictions == 1 and len(cache) == 2
    cache.get("b", make("b" * 10))
    assert built[-1] == "b" * 10, "an evicted key is rendered again"
    big = cache.get("big", make("x" * 30))  # larger than max_bytes: returned, not kept
    assert big == "x" * 30 and "big" not in cache._data
    stats = cache.stats()
    assert stats.nbytes <= 25 and stats.entries <= 2
    with pytest.raises(ValueError):
        CompositeCache(max_entries=0)


def test_a_rewritten_crop_is_rendered_again(questions):
    cache = CompositeCache()
    spec = plan_calls(questions.head(1), {"aurora": "m"}, rotations=1, cache=cache)[0]
    before = _url(spec)
    path = questions.iloc[0]["image_files"][0]
    identity = file_identity([path])[0]
    Image.new("RGB", (64, 48), (250, 250, 0)).save(path)
    os.utime(path, ns=(identity[2] + 10**9, identity[2] + 10**9))
    after = _url(spec)
    assert after != before and cache.stats().misses == 2


def test_a_missing_crop_fails_the_build_with_its_name(questions, tmp_path):
    spec = plan_calls(questions.head(1), {"aurora": "m"}, rotations=1, cache=CompositeCache())[0]
    os.remove(questions.iloc[0]["image_files"][1])
    with pytest.raises(FileNotFoundError, match=r"bbox_1\.png"):
        spec.build()


def test_the_scoring_path_renders_each_composite_once(questions, sim_server, tmp_path, monkeypatch):
    from judgepanel.core.client import run_calls
    from judgepanel.core.store import Store

    monkeypatch.setenv("OPENAI_API_KEY", "x")
    cache = CompositeCache()
    specs = plan_calls(questions, FAMILIES, cache=cache)
    prices = {m: Price(0.1, 0.1) for m in FAMILIES.values()}
    summary = run_calls(
        specs,
        Store(tmp_path / "s.sqlite"),
        prices=prices,
        options=ClientOptions(
            endpoint=Endpoint.at(sim_server.base_url), concurrency=8, progress=False
        ),
    )
    assert summary.ok == len(specs)
    assert cache.stats().misses == 9


def test_a_question_s_crops_are_fitted_once_for_all_its_rotations(questions, monkeypatch):
    """The rotations of a question lay out one fit of its crops, and each composite is
    byte for byte the one rendered afresh from the crops in its shown order."""
    fits = CompositeCache(max_entries=8, size=lambda fit: 1)
    monkeypatch.setattr(protocol, "FIT_CACHE", fits)
    specs = plan_calls(questions, FAMILIES, cache=CompositeCache())
    for spec in specs:
        row = questions.set_index("id").loc[spec.key.item]
        files, r = list(row["image_files"]), spec.key.repetition
        shown = [files[(j + r) % len(files)] for j in range(len(files))]
        assert _url(spec) == composite_url(shown)
    assert fits.stats().misses == len(questions)


def test_a_key_is_built_once_when_threads_ask_for_it_together():
    cache = CompositeCache()
    started, release = threading.Event(), threading.Event()
    builds = []

    def build():
        builds.append(1)
        started.set()
        release.wait(5)
        return "url"

    cache.prefetch("k", build)
    assert started.wait(5)
    cache.prefetch("k", build)  # being built: not started again
    with ThreadPoolExecutor(4) as pool:
        waiting = [pool.submit(cache.get, "k", build) for _ in range(4)]
        release.set()
        assert [w.result(5) for w in waiting] == ["url"] * 4
    assert builds == [1]
    assert (cache.stats().misses, cache.stats().hits) == (1, 4)


def test_a_prefetch_s_error_is_raised_by_the_lookup_that_waits_for_it():
    cache = CompositeCache()
    release = threading.Event()

    def fail():
        release.wait(5)
        raise FileNotFoundError("bbox_9.png")

    cache.prefetch("k", fail)
    threading.Timer(0.05, release.set).start()
    with pytest.raises(FileNotFoundError, match="bbox_9"):
        cache.get("k", lambda: "never")
    assert cache.get("k", lambda: "url") == "url", "a failed build is not kept"


def _prefetch_then_get(cache: CompositeCache, out) -> None:
    cache.prefetch("child", lambda: "child url")
    out.put(cache.get("child", lambda: "never"))


def test_a_forked_child_renders_ahead_with_threads_of_its_own():
    """The parent's worker threads are not in a forked child: it starts its own, instead
    of waiting for a build no thread will finish."""
    cache = CompositeCache()
    release = threading.Event()
    cache.prefetch("parent", lambda: release.wait(5) and "parent url")  # in flight at fork
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    child = ctx.Process(target=_prefetch_then_get, args=(cache, out))
    child.start()
    try:
        assert out.get(timeout=20) == "child url"
    finally:
        release.set()
        child.join(20)
    assert child.exitcode == 0
    assert cache.get("parent", lambda: "never") == "parent url"
