"""The fusion study: rubric-decomposed fusion of VLM aesthetic judges, one module per analysis.

- ``plan``: the scoring design (k holistic + R per dimension); ``run``: what the notebooks
  start from (:func:`load_rated`).
- ``blocks``: the feature blocks and the fused arms (the combiner and the rubric planning
  it shares with VAB live in :mod:`judgepanel.studies.common`); ``compare``: paired arm
  comparisons.
- ``mtmm`` (01), ``ablation`` (02), ``trios`` (03), ``headroom``, ``retest``,
  ``robustness``, ``imagestats``, ``recipe`` and ``recipe_logprob`` (04).
"""

from judgepanel.studies.fusion.run import RatedData as RatedData
from judgepanel.studies.fusion.run import load_profile_rated as load_profile_rated
from judgepanel.studies.fusion.run import load_rated as load_rated
from judgepanel.studies.fusion.run import load_run as load_run
