"""judgepanel: vision-language models as judges of images, studied reproducibly.

Importing the package loads nothing else (the scoring path and the studies pull in heavy
packages, and the simulated judge server imports the rubric constants without needing
either). Each name is imported from the one module that declares it:

- scoring: ``score_run`` from `judgepanel.studies` (which registers the studies' planners)
  and ``load_config`` from `judgepanel.core.config` (``papermill_runs.yaml``);
- reading a store: ``read_calls``, ``score_table``, ``scored_dataset`` from
  `judgepanel.core.frames`;
- datasets: ``load_dataset``, ``load_vab``, ``load_visionq`` from `judgepanel.datasets`;
- the studies: `judgepanel.studies.fusion`, ``.vab``, ``.visionq`` and ``.agreement``.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
