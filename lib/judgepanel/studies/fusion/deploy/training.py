"""``judgepanel fit``: one arm of a finished run, fitted on every labelled image.

The run's dataset is read as the notebooks read it (:func:`~judgepanel.studies.fusion.load_rated`:
the images its scoring design sampled, the panel's ok answers in the store), so the fit
sees exactly the images and answers the study analysed.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from judgepanel.core.config import load_config
from judgepanel.core.errors import ConfigError
from judgepanel.core.rubric import load_rubric
from judgepanel.datasets.kinds import rated_kinds
from judgepanel.studies.fusion.deploy.arms import arm_spec
from judgepanel.studies.fusion.deploy.fit import dataset_sha256, fit_arm
from judgepanel.studies.fusion.deploy.model import DeployedModel
from judgepanel.studies.fusion.run import load_rated


def fit_run(
    run: str,
    arm: str,
    *,
    runs_file: str | Path | None = None,
    dataset: str | None = None,
    families: Sequence[str] = (),
    n_resamples: int | None = None,
) -> DeployedModel:
    """Fit ``arm`` on every labelled image of one rated dataset of ``run``.

    Args:
        run: a run of the runs file.
        arm: one of :data:`~judgepanel.studies.fusion.deploy.arms.ARMS`.
        runs_file: the runs file (default: the project's).
        dataset: which of the run's datasets (needed when it has several rated ones).
        families: the panel (default: the profile's pre-declared families); the best
            single model is chosen among them.
        n_resamples: bootstrap resamples of the out-of-fold accuracy (default: the
            run's ``n_resamples``).
    """
    spec = arm_spec(arm)
    config = load_config(runs_file)
    the_run = config.run(run)
    profile = the_run.profile
    rated = [d for d in the_run.datasets if profile.dataset(d).kind in rated_kinds()]
    if dataset is None:
        if len(rated) != 1:
            raise ConfigError(
                f"run {run!r} has {len(rated)} rated-image datasets ({', '.join(rated)}); "
                "say which with --dataset NAME"
            )
        dataset = rated[0]
    elif dataset not in rated:
        raise ConfigError(f"run {run!r} has no rated-image dataset {dataset!r}: {rated}")
    ref = profile.dataset(dataset)
    names = list(families) or list(profile.predeclared) or list(profile.families)
    unknown = [f for f in names if f not in profile.families]
    if unknown:
        raise ConfigError(f"profile {profile.name!r} has no family {', '.join(unknown)}")
    data = load_rated(the_run, config, families=names, dataset=dataset)
    design = data.design
    y = data.blocks.y
    paths = data.data.images.set_index("image_id")["path"]
    params = the_run.parameters
    extra = {
        "run": run,
        "profile": profile.name,
        "training": {
            "dataset": dataset,
            "kind": ref.kind,
            "root": str(ref.root),
            "sha256": dataset_sha256(y, paths),
            "n_images": len(y),
            "n_dropped": data.n_dropped,
            "store": str(profile.store),
        },
        "prices": {m: config.price(m).model_dump() for m in {profile.families[f] for f in names}},
    }
    return fit_arm(
        spec,
        data.scores,
        y,
        {f: profile.families[f] for f in names},
        k=design.holistic_k,
        r=design.dimension_r,
        temperature=design.temperature,
        n_resamples=int(n_resamples or params.get("n_resamples", 2000)),
        seed=int(params.get("seed", 0)),
        extra=extra,
        rubric=load_rubric(the_run.rubric),
    )
