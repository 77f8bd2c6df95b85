"""The dataset a run gives a study, refused with its name and kind when the study cannot read it.

Each study's ``run`` module starts from the resolved :class:`~judgepanel.core.config.Run`:
the dataset's root and kind come from the run's profile, so a notebook never passes them.
"""

from __future__ import annotations

from collections.abc import Collection

from judgepanel.core.config import DatasetRef, Run
from judgepanel.core.errors import ConfigError


def dataset_of_kind(
    run: Run, kinds: Collection[str], name: str | None = None, *, use: str
) -> DatasetRef:
    """The profile's dataset ``name`` (default: the run's single dataset), of one of ``kinds``.

    Args:
        run: the resolved run.
        kinds: the dataset kinds ``use`` can read.
        name: a dataset of the run's profile; None: the run's only dataset.
        use: what the dataset is read for, for the message (e.g. ``"the VAB study"``).

    Raises:
        ConfigError: the dataset is of another kind (the message names the run, the dataset
            and its kind), the run spans several datasets and ``name`` is None, or the
            profile has no dataset ``name``.
    """
    ref = run.profile.dataset(run.dataset if name is None else name)
    if ref.kind not in kinds:
        raise ConfigError(
            f"run {run.name!r}: {use} needs a dataset of kind {' or '.join(sorted(kinds))}, "
            f"but {ref.name!r} is of kind {ref.kind!r}"
        )
    return ref
