"""The VAB scoring plan: the comparison calls, and the rubric calls score-then-rank reads.

The comparison calls (Top-1, Bot-1, TB-1 in every order) come from
:func:`judgepanel.studies.vab.protocol.plan_calls`. Score-then-rank scores each set image
with the rubric prompts under the ``vab`` scoring design, as the fusion study scores its
rated images (:func:`~judgepanel.studies.common.rubric_plan.plan_images`): the holistic
prompt for every family (each family's ranker ranks by its holistic mean), the dimension
prompts only for the panel families (:func:`panel_families`), the one reader of VAB
dimension scores being the fused panel.
"""

from __future__ import annotations

from judgepanel.core.calls import CallSpec
from judgepanel.core.config import DatasetRef
from judgepanel.core.rubric import load_rubric
from judgepanel.core.scoring import register_planner
from judgepanel.core.settings import ScoreSettings
from judgepanel.datasets import load_vab
from judgepanel.datasets.vab import image_table
from judgepanel.studies.common.rubric_plan import plan_images
from judgepanel.studies.vab.parameters import VabParameters
from judgepanel.studies.vab.protocol import plan_calls
from judgepanel.studies.vab.rankers import panel_families


def plan_dataset(target: DatasetRef, settings: ScoreSettings) -> list[CallSpec]:
    """Every call of a VAB dataset: the comparisons, then the rubric calls of its images."""
    params = settings.parameters
    tasks = load_vab(target.root)
    if settings.limit_images is not None:
        tasks = tasks.head(settings.limit_images)
    specs = plan_calls(
        tasks,
        settings.families,
        dataset=target.name,
        temperature=settings.temperature_for(target),
        n_orders=int(params.get("vab_orders", 3)),
        balanced=bool(params.get("vab_balanced", True)),
        seed=settings.seed,
    )
    panel = panel_families(list(settings.families), settings.predeclared)
    specs += plan_images(
        image_table(tasks),
        settings.families,
        settings.designs[target.name],
        dataset=target.name,
        only={"dimension": panel},
        rubric=load_rubric(settings.rubric),
    )
    return specs


KIND = "vab"
register_planner(
    KIND, plan_dataset, parameters=("vab_orders", "vab_balanced", "seed"), model=VabParameters
)
