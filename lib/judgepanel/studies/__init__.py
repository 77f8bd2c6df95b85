"""The studies, one package each; importing this registers their scoring planners.

- :mod:`judgepanel.studies.fusion`: rubric-decomposed fusion of VLM aesthetic judges.
- :mod:`judgepanel.studies.vab`: best and worst of a same-subject set (VAB).
- :mod:`judgepanel.studies.visionq`: criterion-conditioned choice among lettered panels.
- :mod:`judgepanel.studies.pairwise`: the better of two images, Bradley-Terry scores.

What more than one study uses lives in :mod:`judgepanel.studies.common`; a study never
imports another study (``tests/test_layering.py``).
"""

from judgepanel.core.scoring import score_run
from judgepanel.studies.fusion import plan as _fusion_plan
from judgepanel.studies.pairwise import plan as _pairwise_plan
from judgepanel.studies.vab import plan as _vab_plan
from judgepanel.studies.visionq import plan as _visionq_plan

PLANNED_KINDS: tuple[str, ...] = (
    *_fusion_plan.KINDS,
    _vab_plan.KIND,
    _visionq_plan.KIND,
    _pairwise_plan.KIND,
)
"""The dataset kinds the studies plan calls for."""

__all__ = ["PLANNED_KINDS", "score_run"]
