"""The simulated judge's answer to a pairwise prompt: which of the two images is better.

Recognised from the request alone: exactly two images, each after its slot label ("Image
A:", "Image B:"), and a question after them asking which of the two is better. Each image
is judged FROM ITS PIXELS as the family scores it: for a dimension the prompt names, the
family's perceived value of that dimension (``family.perceive``, as its dimension scores
are drawn), else its overall impression (``family.holistic_z``, as its holistic scores);
never a label. The choice is ``family.pick``: a softmax over the two impressions at the
request's temperature, with the family's own pull toward its preferred slot at the
strength of a set of two (``position_bias x 1/2``, as for VAB's pairs). The answer is the
``BEST: <letter>`` line the prompt asks for, a third of the time after a sentence of
reasons.
"""

from __future__ import annotations

import re

import numpy as np

from judgepanel_sim.judges.handlers import SimRequest, detect_dimension
from judgepanel_sim.judges.vab import VabHandler, _instruction

_WHICH_OF_TWO = re.compile(r"\bwhich of the two\b", re.I)


class PairwiseHandler(VabHandler):
    """The better of two labelled images, overall or on one rubric dimension."""

    name = "pairwise"

    def matches(self, req: SimRequest) -> bool:
        if len(req.images) != 2 or not super().matches(req):
            return False
        return bool(_WHICH_OF_TWO.search(_instruction(req)))

    def _impressions(self, req: SimRequest) -> np.ndarray:
        fam = req.family
        dim = detect_dimension(req)
        out = []
        for img in req.images:
            perceived = fam.perceive(img.features, img.digest, req.rng, req.temperature)
            out.append(perceived[dim] if dim else fam.holistic_z(perceived))
        return np.array(out)
