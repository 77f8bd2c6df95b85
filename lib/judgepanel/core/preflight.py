"""Before anything is spent: are the datasets readable, the key set, the models served?

``judgepanel check`` prints these findings, and ``judgepanel report`` runs them first for a
profile that is not simulated, so a typo in a path or a model id stops the command before
the first paid call.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from judgepanel.core.client import scrub
from judgepanel.core.config import Config, DatasetRef, Profile
from judgepanel.core.endpoint import BASE_URL_ENV, SIMULATOR_TOKEN, Endpoint
from judgepanel.core.rubric import RubricError, default_rubric_path, load_rubric
from judgepanel.datasets import DatasetError, load_dataset, load_vab
from judgepanel.datasets.visionq import load_questions


@dataclass(frozen=True)
class Finding:
    """One check: what was checked, whether it passed, and what was found."""

    what: str
    ok: bool
    detail: str

    def line(self) -> str:
        return f"{'ok  ' if self.ok else 'FAIL'}  {self.what}: {self.detail}"


def check_dataset(ref: DatasetRef) -> Finding:
    """Read a dataset with its loader; a missing folder or a bad file is a failed finding."""
    what = f"dataset {ref.name} ({ref.kind})"
    if not ref.root.exists():
        return Finding(what, False, f"{ref.root}: folder not found")
    skipped = ""
    try:
        if ref.kind == "vab":
            n = len(load_vab(ref.root))
        elif ref.kind == "visionq":
            n = len(load_questions(ref.root, ref.questions, ref.eligible))
        else:
            ds = load_dataset(ref.kind, str(ref.root), **ref.loader_keys)
            n = len(ds.images)
            if ds.skipped:
                skipped = f"; {len(ds.skipped):,} absent from disk left out (missing_images: skip)"
    except (DatasetError, OSError, ValueError) as exc:
        return Finding(what, False, str(exc))
    return Finding(what, True, f"{n:,} items read from {ref.root.name}{skipped}")


def check_rubric(path: Path | None) -> Finding:
    """The rubric a run names (``None``: the project's) loads, with what it asks."""
    shown = path or default_rubric_path()
    try:
        rubric = load_rubric(path)
    except RubricError as exc:
        return Finding(f"rubric {shown.name}", False, str(exc))
    holistic = "no holistic question"
    if rubric.holistic is not None:
        holistic = f"holistic {rubric.holistic.scale.min}-{rubric.holistic.scale.max}"
    detail = f"{len(rubric.dimensions)} dimensions, {holistic}, SHA-256 {rubric.sha256[:12]}"
    return Finding(f"rubric {shown.name}", True, detail)


def check_key(endpoint: Endpoint) -> Finding:
    """The endpoint's key is set in its variable (its value is never shown)."""
    if endpoint.key_env is None:
        return Finding("key", True, "a simulated server needs none")
    ok = bool(os.environ.get(endpoint.key_env, "").strip())
    detail = "set in the environment" if ok else f"{endpoint.key_env} is not set"
    return Finding(endpoint.key_env, ok, detail)


def check_models(profile: Profile, endpoint: Endpoint, timeout: float = 20.0) -> list[Finding]:
    """Each family's model id is listed by the endpoint's ``/v1/models``."""
    base_url = endpoint.base_url
    if not base_url:
        return [Finding("endpoint", False, f"{BASE_URL_ENV} is not set")]
    key = os.environ.get(endpoint.key_env, "").strip() if endpoint.key_env else SIMULATOR_TOKEN
    if not key:
        return [Finding("endpoint", False, f"cannot list models without {endpoint.key_env}")]
    import openai  # only a check that talks to the endpoint needs the SDK

    try:
        with openai.OpenAI(base_url=base_url, api_key=key, timeout=timeout, max_retries=1) as c:
            served = {m.id for m in c.models.list()}
    except openai.OpenAIError as exc:
        return [Finding("endpoint", False, scrub(f"{base_url}: models not listed ({exc})"))]
    found = [Finding("endpoint", True, f"{base_url} lists {len(served)} models")]
    for family, model in profile.families.items():
        ok = model in served
        detail = "served" if ok else "not listed by the endpoint's /v1/models"
        found.append(Finding(f"family {family}", ok, f"{model} {detail}"))
    return found


def preflight(
    config: Config, profile: str, runs: tuple[str, ...] = (), endpoint: Endpoint | None = None
) -> list[Finding]:
    """Every check of a profile (or of some of its runs' datasets), in the order they matter,
    against ``endpoint`` (default: the one ``OPENAI_BASE_URL`` names)."""
    endpoint = endpoint or Endpoint.from_environment()
    prof = config.profile(profile)
    names = (
        list(dict.fromkeys(d for r in runs for d in config.run(r).datasets))
        if runs
        else list(prof.datasets)
    )
    found = [check_dataset(prof.dataset(n)) for n in names]
    chosen = [config.run(r) for r in runs] if runs else config.runs_of(profile)
    rubrics = dict.fromkeys(r.rubric for r in chosen) or {prof.rubric: None}
    found += [check_rubric(path) for path in rubrics]
    found.append(check_key(endpoint))
    found += check_models(prof, endpoint)
    return found
