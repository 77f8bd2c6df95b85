"""The parameters of the rubric-fusion notebooks (00-04, 07, 08 and 10), with their defaults."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from judgepanel.core.parameters import StudyParameters
from judgepanel.core.score_logprobs import MIN_VALID_MASS, LogprobsMode


class FusionParameters(StudyParameters):
    """What the rubric-fusion notebooks read beyond the run's profile and datasets.

    Attributes:
        score: 00 runs or resumes the scoring first (needs an endpoint: the report's, or
            ``OPENAI_BASE_URL``).
        savings_images: 00's images sent two ways (one sample per request, n to a request)
            to measure what samples per request and a prompt cache save (simulated profiles
            only; 0 skips it).
        comparators: dataset -> CSV of off-the-shelf model scores (`judgepanel import scores`).
        probe_k: 04's holistic repetitions of the cost probe.
        ceiling_splits: 04's random split-halves of the noise ceiling.
        headroom_resamples: 04's bootstrap resamples of the headroom.
        n_partitions: 04's fold partitions of the robustness check.
        partition_blocks: 04's feature blocks refitted on every partition.
        imagestats_cache: where 04 caches the F11 image statistics.
        temperature_rule: 07's pre-registered rule (YAML).
        pool_dir: 08's scored calibration pool.
        n_images: 08's images per replicate study.
        null_replicates: 08's replicate studies in the null world.
        curve_replicates: 08's replicate studies per power-curve world.
        side_replicates: 08's replicate studies per side world.
        partitions: 08's fold partitions per replicate of the partition check.
        partition_replicates: 08's replicates of the partition check.
        prompt_mode: ``sample`` asks each rubric prompt k (holistic) or R (dimension)
            times; ``logprob`` asks it once with ``logprobs`` and stores the expected
            score of the score token's distribution (prompt kinds ``holistic_logprob`` and
            ``dimension_logprob``), falling back to the one sampled answer where a model
            sends no logprobs or too little mass on valid scores.
        logprobs_mode: what the endpoint's logprobs describe (``processed``: after
            temperature, what it samples; ``raw``: before, vLLM's default), recorded
            with every logprob answer.
        logprob_min_mass: the valid mass below which a logprob answer falls back.
        sampled_dataset: 09's dataset whose k sampled holistic scores of the same images
            the logprob calls are compared with (``None``: the run's own).
        logprob_datasets: 04's dataset -> the profile's dataset holding logprob calls of
            its images; the recipe then offers one logprob call per prompt where the
            expected score loses at most ``logprob_margin`` in ρ.
        logprob_margin: the loss in ρ the recipe accepts for the cheaper design, stated
            before the comparison (the lower end of the 95% interval must lie above −it).
        agree_epsilon: 10's alternative annotator test allowance, fixed before any result
            (0.1: the authors' value for crowd annotators, as EVA's and PARA's are).
        agree_metric: 10's alignment function of the alt-test (``neg_rmse``, ``abs``,
            ``accuracy``).
        agree_q: 10's false discovery rate of the alt-test's corrections.
        agree_min_items: 10's images an annotator needs to be tested (the authors' 30).
    """

    score: bool = True
    savings_images: int = Field(50, ge=0)
    comparators: dict[str, str] = Field(default_factory=dict)
    probe_k: int = 5
    ceiling_splits: int = 200
    headroom_resamples: int = 2000
    n_partitions: int = 20
    partition_blocks: list[str] = Field(default_factory=lambda: ["pre-declared"])
    imagestats_cache: str = "data/cache/imagestats"
    temperature_rule: str = "rubric/prereg/temperature_rule.yaml"
    pool_dir: str = "data/calibration/pool"
    n_images: int = 500
    null_replicates: int = 200
    curve_replicates: int = 40
    side_replicates: int = 25
    partitions: int = 3
    partition_replicates: int = 60
    prompt_mode: Literal["sample", "logprob"] = "sample"
    logprobs_mode: LogprobsMode = "unknown"
    logprob_min_mass: float = Field(MIN_VALID_MASS, ge=0.0, le=1.0)
    sampled_dataset: str | None = None
    logprob_datasets: dict[str, str] = Field(default_factory=dict)
    logprob_margin: float = Field(0.02, gt=0.0, lt=1.0)
    agree_epsilon: float = Field(0.1, ge=0.0, lt=1.0)
    agree_metric: Literal["neg_rmse", "abs", "accuracy"] = "neg_rmse"
    agree_q: float = Field(0.05, gt=0.0, lt=1.0)
    agree_min_items: int = Field(30, ge=2)
