"""Judges against people, against themselves, and people against each other (issue 44).

For one rated dataset of a run and each question it shares with the rubric (the holistic
one, and every dimension an attribute validates): each judge family's agreement with the
human mean after a named scale map, its repeatability over its k repetitions, the people's own
reliability, the alternative annotator test per judge and for the panel mean, and the
panel's effective number of judges. Every number comes from :mod:`judgepanel.stats`
(reliability, agreement, alt_test, panel_size); this package only lays out the data and
the tables. ``judgepanel agree`` and notebook 10 both start here.
"""

from judgepanel.studies.agreement.card import (
    CARD_FILE,
    CARD_MISSING,
    CARD_TABLE,
    card_rows,
    read_card,
)
from judgepanel.studies.agreement.data import (
    HOLISTIC,
    PANEL,
    AgreementData,
    AgreementError,
    Question,
    StudyInputs,
    agreement_data,
    load_agreement,
    load_study,
    question_of,
    questions,
    study_inputs,
)
from judgepanel.studies.agreement.measures import (
    alt_table,
    alt_tests,
    dimension_table,
    human_reliability,
    judges_vs_humans,
    panel_effective_size,
    pooled_alt_tests,
    pooled_mapping,
    repeatability,
)
from judgepanel.studies.agreement.verdicts import (
    ALT_FAMILY,
    alt_claims,
    alt_family,
    closest_to_passing,
    count_passes,
    section_claims,
)

__all__ = [
    "ALT_FAMILY",
    "CARD_FILE",
    "CARD_MISSING",
    "CARD_TABLE",
    "HOLISTIC",
    "PANEL",
    "AgreementData",
    "AgreementError",
    "Question",
    "StudyInputs",
    "agreement_data",
    "alt_claims",
    "alt_family",
    "alt_table",
    "alt_tests",
    "card_rows",
    "closest_to_passing",
    "count_passes",
    "dimension_table",
    "human_reliability",
    "judges_vs_humans",
    "load_agreement",
    "load_study",
    "panel_effective_size",
    "pooled_alt_tests",
    "pooled_mapping",
    "question_of",
    "questions",
    "read_card",
    "repeatability",
    "section_claims",
    "study_inputs",
]
