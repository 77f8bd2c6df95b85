"""A small scored project for executing the notebooks in tests.

It writes a small synthetic world (40 images per scoring world, a few dozen VAB sets and
VisionQ questions), a runs file whose profile points at it with a light scoring design,
and scores everything against the real simulated judge server. The notebooks then run
through papermill exactly as in ``judgepanel report``, only on less data.

The project and its rendered report are built once per test run and per state of the
sources (:mod:`shared_build`): :func:`shared_small_project` and :func:`shared_report`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import yaml
from shared_build import cached_build

from judgepanel.core.config import Config, load_config
from judgepanel.core.endpoint import Endpoint
from judgepanel.core.local_sim import SimConfig, start_sim_server
from judgepanel.core.paths import project_root
from judgepanel_sim.world.vab import write_vab
from judgepanel_sim.world.visionq import write_visionq
from judgepanel_sim.world.world import write_worlds

FAMILIES = {
    "aurora": "sim-aurora-v1",
    "basalt": "sim-basalt-v1",
    "cobalt": "sim-cobalt-v1",
    "dune": "sim-dune-v1",
    "ember": "sim-ember-v1",
}
SEED = 7
SECRET = "sk-test-DISTINCTIVE-7f3a9c2e41"
"""The key in the environment while the shared report is built: no page or table may show it."""
REPORT_RUNS = ("test-eva", "test-para", "test-headroom", "test-logprob", "test-vab", "test-visionq")


@dataclass(frozen=True)
class SmallProject:
    """Paths of the small project; ``config`` is its parsed runs file."""

    root: Path
    runs_file: Path
    store: Path
    outputs: Path
    config: Config


def runs_yaml(root: Path) -> dict:
    """A runs file for the small world: the demo's families and prices, a light design."""
    main = yaml.safe_load((project_root() / "papermill_runs.yaml").read_text())
    synth = root / "synth"
    return {
        "profiles": {
            "test": {
                "description": "Small simulated project for the tests.",
                "simulated": True,
                "store": str(root / "store.sqlite"),
                "datasets": {
                    "eva": {"kind": "eva", "root": str(synth / "synth-eva")},
                    "eva-logprob": {"kind": "eva", "root": str(synth / "synth-eva")},
                    "para": {"kind": "para", "root": str(synth / "synth-para")},
                    "vab": {"kind": "vab", "root": str(synth / "synth-vab")},
                    "visionq": {"kind": "visionq", "root": str(synth / "synth-visionq")},
                },
                "families": FAMILIES,
                "predeclared": ["aurora", "basalt", "cobalt"],
                "concurrency": 16,
                "max_cost": 20.0,
            }
        },
        "scoring": {
            "eva": {"holistic_k": 6, "dimension_r": 2, "temperature": 0.3, "n_images": 40},
            "para": {"holistic_k": 5, "dimension_r": 2, "temperature": 0.3, "n_images": 40},
            "vab": {"holistic_k": 2, "dimension_r": 1, "temperature": 0.3},
        },
        "prices": main["prices"],
        # 00's savings sample: the quick report's ten images, not the default fifty (all
        # of the small world's forty), enough for the relations the tests check
        "parameters": {"n_resamples": 300, "seed": 0, "n_jobs": 1, "savings_images": 10},
        "runs": {
            "test-eva": {
                "profile": "test",
                "dataset": "eva",
                "notebooks": main["runs"]["demo-eva"]["notebooks"],
                # the small world's EVA raters rate a few images each: 10's alt-test asks
                # fewer of them than the authors' 30, to run at all
                "parameters": {"agree_min_items": 10},
            },
            "test-para": {
                "profile": "test",
                "dataset": "para",
                "notebooks": main["runs"]["demo-para"]["notebooks"],
            },
            "test-headroom": {
                "profile": "test",
                "datasets": ["eva", "para"],
                "notebooks": main["runs"]["demo-headroom"]["notebooks"],
                "parameters": {
                    "n_partitions": 3,
                    "headroom_resamples": 200,
                    "ceiling_splits": 50,
                    "imagestats_cache": str(root / "cache"),
                    "logprob_datasets": {"eva": "eva-logprob"},  # para has none: said so
                },
            },
            "test-logprob": {
                "profile": "test",
                "dataset": "eva-logprob",
                "notebooks": main["runs"]["demo-logprob"]["notebooks"],
                "parameters": main["runs"]["demo-logprob"]["parameters"],
            },
            "test-vab": {
                "profile": "test",
                "dataset": "vab",
                "notebooks": main["runs"]["demo-vab"]["notebooks"],
                "parameters": {"vab_balanced": False},
            },
            "test-visionq": {
                "profile": "test",
                "dataset": "visionq",
                "notebooks": main["runs"]["demo-visionq"]["notebooks"],
                "parameters": {"visionq_rotations": 2},
            },
        },
    }


def build_small_project(root: Path, base_url: str) -> SmallProject:
    """Write the small world and runs file under ``root`` and score every run's dataset."""
    from judgepanel.studies import score_run

    synth = root / "synth"
    write_worlds(synth, n_images=40, seed=SEED, only=("eva", "para"))
    write_vab(synth / "synth-vab", SEED, n_tasks=24)
    write_visionq(synth / "synth-visionq", SEED, n_papers=12)
    runs_file = root / "papermill_runs.yaml"
    runs_file.write_text(yaml.safe_dump(runs_yaml(root), sort_keys=False))
    for run in ("test-eva", "test-para", "test-logprob", "test-vab", "test-visionq"):
        summary = score_run(
            run, runs_file=runs_file, endpoint=Endpoint.at(base_url), progress=False
        )
        assert summary.failed == 0 and not summary.stopped_by_budget, summary
    return SmallProject(
        root, runs_file, root / "store.sqlite", root / "outputs", load_config(runs_file)
    )


@contextmanager
def environment(**values: str | None) -> Iterator[None]:
    """Set (or, with None, remove) environment variables for a block, then restore them."""
    saved = {k: os.environ.get(k) for k in values}
    try:
        for k, v in values.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _project(root: Path) -> SmallProject:
    runs_file = root / "papermill_runs.yaml"
    return SmallProject(
        root, runs_file, root / "store.sqlite", root / "outputs", load_config(runs_file)
    )


def shared_small_project() -> SmallProject:
    """The small project of today's sources, scored once against its own simulated server."""

    def build(root: Path) -> None:
        with (
            start_sim_server(SimConfig(seed=0), log_dir=root) as server,
            environment(OPENAI_API_KEY="sim-test-key"),
        ):
            build_small_project(root, server.base_url)

    return _project(cached_build("project", build))


def shared_report(project: SmallProject) -> Path:
    """Every notebook of the small project's runs as `judgepanel report` renders them (the
    pages, the call explorers, the index and the manifest), built once; its outputs folder.

    It is built as a researcher would run it, from the command line of `judgepanel report`,
    with an endpoint and a key in the environment (the key is :data:`SECRET`, which no page
    or table may show).
    """
    from judgepanel.cli import build_parser
    from judgepanel.cli.report import report_command

    def build(root: Path) -> None:
        outputs = root / "outputs"
        argv = ["report", "--runs-file", str(project.runs_file), "--profile", "test",
                "--outputs", str(outputs), "--no-progress"]  # fmt: skip
        argv += [a for run in REPORT_RUNS for a in ("--run", run)]
        with (
            start_sim_server(SimConfig(seed=0), log_dir=root) as server,
            environment(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY=SECRET),
        ):
            code = report_command(build_parser().parse_args(argv))
        assert code == 0, f"the shared report failed; see {outputs}"

    return cached_build("report", build) / "outputs"
