"""``judgepanel predict``: plan the calls a deployed scorer's features need, and send them.

The calls are planned as the study plans them
(:func:`~judgepanel.studies.common.rubric_plan.plan_images`), under the model's families, k,
R and temperature, so their store keys are those of the training calls: an image scored
before (a training image, or a rerun) is read from the store, never sent again. The rest
goes through the usual client (:func:`~judgepanel.core.client.run_calls`): resumable, under
a cost ceiling, every answer checkpointed as it arrives.

Before anything is planned, the model must match what would be sent: the rubric's
SHA-256, every prompt's hash and every family's model id (:func:`check_identity`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from judgepanel.core.batch import run_batches
from judgepanel.core.calls import CallSpec
from judgepanel.core.client import RunSummary, run_calls
from judgepanel.core.config import DatasetRef, Price, ScoringDesign
from judgepanel.core.errors import ConfigError
from judgepanel.core.frames import read_calls, score_table
from judgepanel.core.rubric import Rubric, load_rubric
from judgepanel.core.scoring import estimate_plan
from judgepanel.core.sendconfig import ClientOptions
from judgepanel.core.store import Store
from judgepanel.datasets import load_dataset
from judgepanel.datasets.folder import FOLDER_KIND, load_folder
from judgepanel.datasets.kinds import rated_kinds
from judgepanel.errors import JudgepanelError
from judgepanel.studies.common.rubric_plan import plan_images
from judgepanel.studies.fusion.deploy.arms import ArmSpec, arm_features
from judgepanel.studies.fusion.deploy.fit import predict_model, prompt_hashes
from judgepanel.studies.fusion.deploy.model import DeployedModel
from judgepanel.studies.fusion.deploy.shift import shift_table


class ModelMismatch(JudgepanelError, ValueError):
    """The model was fitted on answers to other prompts, another rubric or other models."""


@dataclass(frozen=True)
class ImageSource:
    """The images to score and the dataset key their calls are stored under.

    Attributes:
        name: the store's dataset key (the training dataset's when the images are its).
        kind: ``folder``, ``eva`` or ``para``.
        root: the folder read.
        images: columns ``image_id`` and ``path``.
        skipped: the labelled images left out as absent from disk (``--missing-images
            skip``).
    """

    name: str
    kind: str
    root: Path
    images: pd.DataFrame
    skipped: tuple[str, ...] = ()


def resolve_source(
    model: DeployedModel,
    spec: str,
    store_dataset: str | None = None,
    missing_images: str = "error",
) -> ImageSource:
    """The images of ``KIND:PATH`` (``folder:DIR`` for images without labels).

    A labelled dataset is read under ``missing_images`` (``error`` or ``skip``: its
    images absent from disk are an error, or left out); a folder holds only what is on disk.

    The calls are keyed by the training dataset's name when the images are the training
    dataset's own folder (so its stored calls are reused), else by ``KIND-FOLDER-HASH``
    (the folder's name and a hash of its full path), or by ``store_dataset`` when given.
    """
    kind, sep, root = spec.partition(":")
    if not sep or not root:
        raise ConfigError(f"--dataset {spec!r}: expected KIND:PATH, for example folder:new_images")
    source_kinds = (FOLDER_KIND, *rated_kinds())
    if kind not in source_kinds:
        raise ConfigError(f"--dataset kind {kind!r}: expected one of {', '.join(source_kinds)}")
    path = Path(root).resolve()
    skipped: tuple[str, ...] = ()
    if kind == FOLDER_KIND:
        images = load_folder(path)
    else:
        ref = DatasetRef(kind, kind, path).with_missing_images(missing_images)
        ds = load_dataset(kind, str(path), **ref.loader_keys)
        images, skipped = ds.images[["image_id", "path"]], ds.skipped
    training = model.meta.get("training", {})
    trained_on = training.get("root")
    same = kind == training.get("kind") and trained_on and path == Path(trained_on).resolve()
    if store_dataset:
        name = store_dataset
    elif same:
        name = str(training["dataset"])
    else:
        digest = hashlib.sha256(str(path).encode()).hexdigest()[:8]
        name = f"{kind}-{path.name}-{digest}"
    return ImageSource(name, kind, path, images.reset_index(drop=True), skipped)


def sent_identity(
    model: DeployedModel, models: Mapping[str, str] | None = None, rubric: Rubric | None = None
) -> dict:
    """What a prediction would send: the rubric's hash, the prompts' hashes, model ids."""
    rubric = rubric or load_rubric()
    models = dict(models or {})
    unknown = sorted(set(models) - set(model.families))
    if unknown:
        raise ConfigError(f"--models names families the model has not: {unknown}")
    return {
        "rubric_sha256": rubric.sha256,
        "prompt_hashes": prompt_hashes(spec_of(model), rubric),
        "families": {f: models.get(f, m) for f, m in model.families.items()},
    }


def check_identity(
    model: DeployedModel, models: Mapping[str, str] | None = None, rubric: Rubric | None = None
) -> None:
    """Refuse a model whose rubric, prompts or model ids differ from what would be sent.

    Raises:
        ModelMismatch: naming every difference.
    """
    now = sent_identity(model, models, rubric)
    problems = []
    if model.meta["rubric_sha256"] != now["rubric_sha256"]:
        problems.append(
            f"rubric SHA-256: the model was fitted with {model.meta['rubric_sha256'][:12]}..., "
            f"the rubric here is {now['rubric_sha256'][:12]}..."
        )
    fitted = model.meta["prompt_hashes"]
    for prompt in sorted(set(fitted) | set(now["prompt_hashes"])):
        a, b = fitted.get(prompt), now["prompt_hashes"].get(prompt)
        if a != b:
            problems.append(f"prompt {prompt}: fitted with hash {str(a)[:12]}, sends {str(b)[:12]}")
    for fam, fitted_id in model.families.items():
        if now["families"][fam] != fitted_id:
            problems.append(
                f"model id of {fam}: fitted on {fitted_id}, would send {now['families'][fam]}"
            )
    if problems:
        raise ModelMismatch(
            "the model does not match what this prediction would send, so its features would "
            "not mean what they meant in training: " + "; ".join(problems)
        )


def spec_of(model: DeployedModel) -> ArmSpec:
    m = model.meta
    return ArmSpec(m["arm"], m["holistic"], tuple(m["dimensions"]), m["combiner"])


def plan_predict(
    model: DeployedModel, source: ImageSource, rubric: Rubric | None = None
) -> list[CallSpec]:
    """Exactly the calls the model's features need, keyed as the training calls were
    (``rubric``: the rubric sent, default the project's)."""
    m = model.meta
    design = ScoringDesign(holistic_k=m["k"], dimension_r=m["r"], temperature=m["temperature"])
    wanted = {(fam, call_type, dim): reps for fam, call_type, dim, reps in m["calls"]}
    call_types = tuple(dict.fromkeys(call_type for _, call_type, _, _ in m["calls"]))
    specs = plan_images(
        source.images,
        model.families,
        design,
        dataset=source.name,
        call_types=call_types,
        rubric=rubric,
    )
    return [
        s
        for s in specs
        if s.key.repetition < wanted.get((s.key.family, s.key.call_type, s.key.dimension), 0)
    ]


def model_prices(model: DeployedModel) -> dict[str, Price]:
    """The price of each model id, as recorded at fitting time."""
    return {m: Price(**p) for m, p in model.meta.get("prices", {}).items()}


def estimate(
    specs: list[CallSpec], store: Path, prices: dict[str, Price], *, max_reasks: int
) -> pd.DataFrame:
    """Per family: planned, stored, to send, and the expected and upper-bound cost."""
    if not store.exists():
        with Store(":memory:") as db:
            return estimate_plan(specs, db, prices, max_reasks=max_reasks)
    with Store(store, readonly=True) as db:
        return estimate_plan(specs, db, prices, max_reasks=max_reasks)


def send(
    specs: list[CallSpec],
    store: Path,
    prices: dict[str, Price],
    options: ClientOptions,
) -> RunSummary:
    """Send the planned calls the store lacks, online (see
    :func:`judgepanel.core.client.run_calls`) or, with ``options.batch``, through the
    provider's batch API (:func:`judgepanel.core.batch.run_batches`)."""
    with Store(store) as db:
        if options.batch:
            return run_batches(
                specs, db, prices=prices, options=options, run="predict", desc="predict"
            )
        return run_calls(specs, db, prices=prices, options=options, desc="predict")


@dataclass(frozen=True)
class Prediction:
    """The scores of the new images and the shift check against the training images.

    Attributes:
        table: one row per image: image_id, score, rank (1 = best), the features,
            ``missing_features`` and ``failed_calls`` (named; empty when complete).
        shift: :func:`~judgepanel.studies.fusion.deploy.shift.shift_table`.
    """

    table: pd.DataFrame
    shift: pd.DataFrame


def _call_name(key_family: str, call_type: str, dim: str, rep: int) -> str:
    return f"{key_family} {call_type}{':' + dim if dim else ''} #{rep}"


def unanswered(specs: list[CallSpec], calls: pd.DataFrame) -> pd.Series:
    """Per image, the planned calls without an ok answer, named with their status/reason."""
    ok = calls[calls["status"] == "ok"]
    done = set(
        zip(ok["item"], ok["family"], ok["kind"], ok["dimension"], ok["repetition"], strict=True)
    )
    failed = calls[calls["status"] == "failed"].set_index(
        ["item", "family", "kind", "dimension", "repetition"]
    )["reason"]
    out: dict[str, list[str]] = {}
    for s in specs:
        k = s.key
        ident = (k.item, k.family, k.call_type, k.dimension, k.repetition)
        if ident in done:
            continue
        why = failed.get(ident, "not sent")
        why = why if isinstance(why, str) else str(why.iloc[0])
        name = _call_name(k.family, k.call_type, k.dimension, k.repetition)
        out.setdefault(k.item, []).append(f"{name} ({why or 'failed'})")
    return pd.Series({i: "; ".join(v) for i, v in out.items()}, dtype=object)


def predict_source(
    model: DeployedModel, source: ImageSource, specs: list[CallSpec], store: Path
) -> Prediction:
    """Score every image of ``source`` from the store's answers to ``specs``."""
    cols = ["dataset", "item", "family", "kind", "dimension", "repetition", "temperature",
            "rubric_sha", "status", "value", "reason"]  # fmt: skip
    calls = read_calls(store, source.name, columns=cols) if store.exists() else pd.DataFrame()
    m = model.meta
    items = source.images["image_id"].astype(str).tolist()
    if len(calls):
        calls = calls[calls["temperature"] == m["temperature"]]
        calls = calls[calls["rubric_sha"] == m["rubric_sha256"]]
        calls = calls[calls["family"].isin(list(model.families))]
    if len(calls) and (calls["status"] == "ok").any():
        scores = score_table(
            calls, source.name, rubric_sha=m["rubric_sha256"], temperature=m["temperature"]
        )
    else:
        scores = pd.DataFrame(columns=["item", "family", "kind", "dimension", "repetition",
                                       "value"])  # fmt: skip
        calls = pd.DataFrame(columns=cols)
    X = arm_features(scores, spec_of(model), list(model.families), m["k"], items)
    score = predict_model(model, X)
    table = pd.DataFrame({"image_id": items})
    table["score"] = score.to_numpy()
    table["rank"] = table["score"].rank(ascending=False, method="min").astype("Int64")
    for c in model.columns:
        table[c] = X[c].to_numpy()
    table["missing_features"] = [
        ", ".join(c for c in model.columns if not np.isfinite(X.loc[i, c])) for i in items
    ]
    table["failed_calls"] = unanswered(specs, calls).reindex(items).fillna("").to_numpy()
    table["complete"] = table["failed_calls"] == ""
    shift = shift_table(model.arrays["train_X"], X, model.columns)
    return Prediction(table, shift)
