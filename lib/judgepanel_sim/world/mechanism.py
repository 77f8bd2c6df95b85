"""Mechanism knobs of the EVA-like world: worlds whose truth about fusion is known.

The demo world is tuned to nothing; its consensus is the weighted latent sum of the world
card. The calibration study needs worlds where the answer to "does a panel pay?" is
planted, so that it can measure how often the pipeline finds what is there and how often
it finds what is not. A `Mechanism` replaces the demo's consensus weights and scales the
raters' noise; the pictures, and therefore everything a judge sees, stay the same.

Knobs (the world card, section 8, gives their meaning):

- ``dimension_evidence`` (s, 0 to 1): how much of the human consensus lies along a
  direction that the rubric dimensions expose and a holistic verdict compresses away.
  The consensus is ``sqrt(1 - s^2) * verdict + s * contrast`` (both unit variance and
  uncorrelated): ``verdict`` is the latent mix that the judges' holistic verdicts weigh
  (`VERDICT_MIX`); ``contrast`` is colour and tone made uncorrelated with the verdict, the
  part of colour the verdicts do not weigh but the colour prompt asks about. At 0 the
  verdict already carries everything the consensus asks for; at 1 it carries nothing.
- ``rater_noise``: a multiplier on every rater's noise (1 = the world card's raters). More
  noise lowers the noise ceiling and so the headroom a better judge could use.
- ``shared_error``: the share of the judges' per-image error variance that all families
  have in common (`judgepanel_sim.judges.families.SHARED_ERROR` in the simulator, 0.35).
  It is read by the in-process scorer; the world's ratings do not depend on it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from judgepanel_sim import portable as P
from judgepanel_sim.world.aesthetic import LATENT_CORRELATION, LATENTS

VERDICT_MIX: dict[str, float] = {
    "quality": 0.22,
    "composition": 0.25,
    "colour": 0.25,
    "distinctiveness": 0.11,
    "emotion": 0.17,
    "hidden": 0.0,
}
"""What a holistic verdict weighs: the five simulated families' mean taste over the five
perceivable latents (``tests/test_mechanism.py`` checks it against the families)."""

CONTRAST_MIX: dict[str, float] = {"colour": 1.0}
"""The planted direction before it is made uncorrelated with the verdict: colour and tone,
which the pre-declared families read well on the dimension prompt (skills .8, .6, .88).

Chosen among single latents and contrasts of two by what the simulated judges' dimension
scores can carry beyond their verdicts at all; contrasts of two dimensions carry less,
because the families' per-image errors and halo blur a difference of two readings."""

DEMO_SHARED_ERROR = 0.35
"""The simulator's share of common error (kept equal to ``families.SHARED_ERROR``)."""


def _vector(mix: dict[str, float]) -> np.ndarray:
    return np.array([mix.get(name, 0.0) for name in LATENTS], dtype=float)


def _unit(w: np.ndarray) -> np.ndarray:
    return w / np.sqrt(P.dot(w, P.matvec(LATENT_CORRELATION, w)))


@dataclass(frozen=True)
class Mechanism:
    """The knobs of one calibration world (see the module docstring).

    Attributes:
        dimension_evidence: s in [0, 1], the consensus's weight on the planted contrast.
        rater_noise: multiplier (> 0) on every rater's noise.
        shared_error: share in [0, 1) of the judges' per-image error common to all families.
    """

    dimension_evidence: float = 0.0
    rater_noise: float = 1.0
    shared_error: float = DEMO_SHARED_ERROR

    def __post_init__(self) -> None:
        if not 0.0 <= self.dimension_evidence <= 1.0:
            raise ValueError(
                f"dimension_evidence must lie in [0, 1], got {self.dimension_evidence}"
            )
        if not self.rater_noise > 0.0:
            raise ValueError(f"rater_noise must be positive, got {self.rater_noise}")
        if not 0.0 <= self.shared_error < 1.0:
            raise ValueError(f"shared_error must lie in [0, 1), got {self.shared_error}")

    @property
    def label(self) -> str:
        """A short name: ``s0.30-noise1.00-shared0.35``."""
        return (
            f"s{self.dimension_evidence:.2f}-noise{self.rater_noise:.2f}"
            f"-shared{self.shared_error:.2f}"
        )

    def consensus_mix(self) -> np.ndarray:
        """The consensus weights over `LATENTS`; unit variance under the latent correlations."""
        s = self.dimension_evidence
        return np.sqrt(1.0 - s * s) * verdict_direction() + s * contrast_direction()


def verdict_direction() -> np.ndarray:
    """`VERDICT_MIX` as a unit-variance weight vector over `LATENTS`."""
    return _unit(_vector(VERDICT_MIX))


def contrast_direction() -> np.ndarray:
    """`CONTRAST_MIX` made uncorrelated with the verdict, with unit variance."""
    v = verdict_direction()
    c = _vector(CONTRAST_MIX)
    c = c - P.dot(c, P.matvec(LATENT_CORRELATION, v)) * v
    return _unit(c)
