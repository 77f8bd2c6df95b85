"""The VisionQ scoring plan: one composite-image question per question and rotation."""

from __future__ import annotations

from judgepanel.core.calls import CallSpec
from judgepanel.core.config import DatasetRef
from judgepanel.core.scoring import register_planner
from judgepanel.core.settings import ScoreSettings
from judgepanel.datasets.visionq import load_questions
from judgepanel.studies.visionq.parameters import VisionqParameters
from judgepanel.studies.visionq.protocol import plan_calls


def plan_dataset(target: DatasetRef, settings: ScoreSettings) -> list[CallSpec]:
    """Every call of a VisionQ dataset: each eligible question in each rotation asked."""
    questions = load_questions(target.root, target.questions, target.eligible)
    if settings.limit_images is not None:
        questions = questions.head(settings.limit_images)
    return plan_calls(
        questions,
        settings.families,
        dataset=target.name,
        temperature=settings.temperature_for(target),
        rotations=int(settings.parameters.get("visionq_rotations", 0)),
        seed=settings.seed,
    )


KIND = "visionq"
register_planner(
    KIND, plan_dataset, parameters=("visionq_rotations", "seed"), model=VisionqParameters
)
