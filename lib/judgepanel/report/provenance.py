"""Where a page's numbers come from: run, data, store, seeds, commit and date, in one record.

A run whose dataset entry says ``missing_images: skip`` also records the images it left
out as absent from disk (`skipped`), so a reader sees what was not scored.

The record is written beside each run's pages (``outputs/<run>/provenance.json``) and shown
as a compact box at the top of every page and on the index. It names files by their place
in the project and identifies their content by a short hash, so no machine path appears;
an answers file imported into the run's store is named with the SHA-256 of the bytes it
was last imported from (``imports``; the box shows it beside the store).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from judgepanel.core.config import Config, Run
from judgepanel.core.frames import skipped_images
from judgepanel.core.labels import item_noun
from judgepanel.core.store import Store, StoreError
from judgepanel.report.jsonfile import write_json

PROVENANCE_FILE = "provenance.json"
_SMALL_FILE = 1 << 20
"""Data files up to this size are hashed by content; larger ones (images) by name and size."""


def git_commit(root: Path) -> str:
    """The short commit of the checkout, ``+dirty`` when it has changes; ``unknown`` outside git."""
    try:
        sha = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short=10", "HEAD"],
            capture_output=True, text=True, check=True, timeout=10,
        ).stdout.strip()  # fmt: skip
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, check=True, timeout=10,
        ).stdout.strip()  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{sha}+dirty" if dirty else sha


def _files_hash(paths: list[Path]) -> str:
    """A short hash over files: small ones by content, large ones by relative name and size."""
    h = hashlib.sha256()
    for base in paths:
        if not base.exists():
            h.update(f"missing:{base.name}".encode())
            continue
        files = [base] if base.is_file() else sorted(p for p in base.rglob("*") if p.is_file())
        for f in files:
            rel = f.relative_to(base).as_posix() if f != base else f.name
            size = f.stat().st_size
            h.update(f"{rel}\0{size}\0".encode())
            if size <= _SMALL_FILE:
                h.update(f.read_bytes())
    return h.hexdigest()[:12]


def store_hash(store: Path) -> str:
    """A short content hash of the store file and its write-ahead log."""
    h = hashlib.sha256()
    for f in (store, store.with_name(store.name + "-wal")):
        if f.exists():
            with f.open("rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 22), b""):
                    h.update(chunk)
    return h.hexdigest()[:12] if store.exists() else "no store"


def n_items(store: Path, datasets: tuple[str, ...]) -> dict[str, int]:
    """Items with at least one stored call, per dataset (0 when the store is absent)."""
    try:
        with Store(store, readonly=True) as s:
            return {d: s.n_items(d) for d in datasets}
    except (FileNotFoundError, StoreError):
        return dict.fromkeys(datasets, 0)


def imported_files(store: Path, datasets: tuple[str, ...]) -> list[dict[str, Any]]:
    """The answers files imported into the store for these datasets, as each was last
    imported: ``file`` (its name), ``sha256`` (the digest of its bytes), ``dataset`` and
    ``answers`` (how many of its answers the store holds); empty without a store."""
    try:
        with Store(store, readonly=True) as s:
            table = s.imports()
    except (FileNotFoundError, StoreError):
        return []
    table = table[table["dataset"].isin(datasets)]
    return [
        {"file": r.file, "sha256": r.sha256, "dataset": r.dataset, "answers": int(r.rows)}
        for r in table.itertuples()
    ]


def store_label(store: Path, imports: list[dict[str, Any]]) -> str:
    """The store as the provenance box names it: its file name, and each answers file
    imported into it with its SHA-256, so a reader can tell which file the page read."""
    files = "; ".join(f"{i['file']} (SHA-256 {i['sha256']})" for i in imports)
    return f"{store.name}, with the answers imported from {files}" if imports else store.name


def item_nouns(run: Run) -> dict[str, str]:
    """Per dataset of the run, the plural noun its items are counted in."""
    return {d: item_noun(run.profile.dataset(d).kind) for d in run.datasets}


def world_seeds(run: Run) -> dict[str, int]:
    """The generating seed of each synthetic dataset of the run, when its truth file says."""
    seeds = {}
    for name in run.datasets:
        root = run.profile.dataset(name).root
        truth = root.parent / "truth" / f"{root.name}.json"
        if truth.exists():
            seed = json.loads(truth.read_text(encoding="utf-8")).get("seed")
            if seed is not None:
                seeds[name] = int(seed)
    return seeds


def skipped(run: Run) -> dict[str, Any]:
    """What the run left out of its datasets as absent from disk: empty unless a dataset
    entry says ``missing_images: skip``; else ``missing_images`` (each such dataset's
    policy), ``skipped_images`` (their ids) and ``n_skipped`` (their count), by dataset."""
    refs = [run.profile.dataset(d) for d in run.datasets]
    under = [ref for ref in refs if ref.missing_images == "skip"]
    if not under:
        return {}
    ids: dict[str, list[str]] = {}
    counts: dict[str, int | None] = {}
    for ref in under:
        try:
            ids[ref.name] = list(skipped_images(ref))
            counts[ref.name] = len(ids[ref.name])
        except (ValueError, OSError):  # the dataset cannot be read: its notebooks say why
            ids[ref.name], counts[ref.name] = [], None
    return {
        "missing_images": {ref.name: "skip" for ref in under},
        "skipped_images": ids,
        "n_skipped": counts,
    }


def provenance(
    config: Config,
    run: Run,
    root: Path,
    *,
    overrides: dict[str, Any] | None = None,
    quick: bool = False,
) -> dict[str, Any]:
    """The provenance record of one run, as the pages and the index show it."""
    profile = run.profile
    params = {**config.parameters, **run.parameters, **(overrides or {})}
    imports = imported_files(profile.store, run.datasets)
    # What differs from the runs file's defaults: the run's own parameters and ``-p``.
    changed = {
        k: v
        for k, v in {**run.parameters, **(overrides or {})}.items()
        if k not in config.parameters or config.parameters[k] != v
    }
    return {
        "run": run.name,
        "profile": profile.name,
        "simulated": profile.simulated,
        "quick": quick,
        "datasets": list(run.datasets),
        "n_items": n_items(profile.store, run.datasets),
        "item_nouns": item_nouns(run),
        "seed": params.get("seed"),
        "world_seeds": world_seeds(run),
        "n_resamples": params.get("n_resamples"),
        "overrides": {k: changed[k] for k in sorted(changed)},
        "commit": git_commit(root),
        "store": store_label(profile.store, imports),
        "store_hash": store_hash(profile.store),
        "data_hash": _files_hash([profile.dataset(d).root for d in run.datasets]),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        **skipped(run),
        **({"imports": imports} if imports else {}),
    }


def write_provenance(run_dir: Path, record: dict[str, Any]) -> Path:
    """Keep the record beside the run's pages, for the index."""
    path = run_dir / PROVENANCE_FILE
    write_json(path, record)  # whole: a run's notebooks may finish at the same time
    return path


def read_provenance(run_dir: Path) -> dict[str, Any] | None:
    """The record written by :func:`write_provenance`, if any."""
    path = run_dir / PROVENANCE_FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
