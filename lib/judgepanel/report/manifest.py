"""The report's table manifest: one SHA-256 per table, and the check of a report against it.

A reviewer who runs ``make report`` should get the tables the authors got. Every table a
notebook shows is written to ``<run>/tables/<name>.csv`` (floats with
:data:`FLOAT_DIGITS` significant digits, so that a last-bit difference of a sum that BLAS or
a thread split rounded differently does not reach the file). ``outputs/MANIFEST.sha256``
holds one line per table: the SHA-256 of the table as the manifest reads it, and its path.

What measures the run rather than the data stays out of the digest: the columns named in
:data:`RUN_MEASURES` (wall times; how many calls this execution sent or found already in the
store). The committed manifests of the demo report, full and quick, sit beside the
reference tables they were made from (:func:`reference_dir`), so that ``judgepanel verify``
names each table that differs and shows its first differing cell. A manifest names the
profile whose report it is (``# profile:``; a manifest without the line is the demo's),
so that another study's report, in a folder of its own, has a reference of its own.
"""

from __future__ import annotations

import hashlib
import io
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from judgepanel.core.paths import project_root

MANIFEST_NAME = "MANIFEST.sha256"
FLOAT_DIGITS = 6
FLOAT_FORMAT = f"%.{FLOAT_DIGITS}g"
"""How every table CSV writes a float: six significant digits."""

RUN_MEASURES: dict[str, tuple[str, ...]] = {
    # a request refused under a rate limit depends on timing, as do the requests sent
    "scoring_run": ("elapsed", "sent", "skipped", "requests", "refused"),
    # when the rule was committed (a git date, "unknown" outside a checkout), when the grid
    # was first scored, and which came first: facts of this checkout and this execution
    "table_temperature_provenance": ("committed", "first_grid_score", "rule_first"),
}
"""Per table, the columns that measure the execution or the checkout, not the data: left out
of digests."""

SIZES = ("full", "quick")
DEFAULT_PROFILE = "demo"


def reference_dir(size: str, root: Path | None = None, profile: str = DEFAULT_PROFILE) -> Path:
    """Where the committed manifest and tables of ``profile``'s report of ``size`` live."""
    if size not in SIZES:
        raise ValueError(f"unknown report size {size!r}; choose from {', '.join(SIZES)}")
    return (root or project_root()) / "tests" / "reference" / f"{profile}-{size}"


def write_table(df: pd.DataFrame, path: Path, index: bool = False) -> None:
    """Write a report table as every table is written (floats at :data:`FLOAT_FORMAT`)."""
    df.to_csv(path, index=index, float_format=FLOAT_FORMAT, lineterminator="\n")


LEDGER_TABLE = "claims.csv"
"""The report's claims ledger (``judgepanel.report.ledger``), a table of the manifest too."""
FAMILIES_TABLE = "claim_families.csv"
"""The correction families the ledger's rows were corrected in (name, description, alpha,
method, page), a table of the manifest too."""


def table_paths(outputs: Path) -> list[Path]:
    """Every table of a report, as paths relative to ``outputs`` (``<run>/tables/x.csv``,
    the claims ledger ``claims.csv`` and its families ``claim_families.csv``)."""
    outputs = Path(outputs)
    found = sorted(p.relative_to(outputs) for p in outputs.glob("*/tables/*.csv"))
    for top in (LEDGER_TABLE, FAMILIES_TABLE):
        if (outputs / top).exists():
            found.append(Path(top))
    return [p for p in found if p.parts[0] != "interactive"]


def canonical_table(path: Path) -> pd.DataFrame:
    """A table as the manifest reads it: every cell as written, less :data:`RUN_MEASURES`.
    A table written without columns (an empty frame's CSV) reads as an empty table: the
    manifest then names it, and the report goes on to say which notebook failed."""
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False)
    except pd.errors.EmptyDataError:
        return pd.DataFrame()
    measures = RUN_MEASURES.get(Path(path).stem, ())
    return table.drop(columns=[c for c in measures if c in table.columns])


def table_digest(path: Path) -> str:
    """SHA-256 of :func:`canonical_table`'s CSV text."""
    buf = io.StringIO()
    canonical_table(path).to_csv(buf, index=False, lineterminator="\n")
    return hashlib.sha256(buf.getvalue().encode("utf-8")).hexdigest()


def manifest_text(outputs: Path, size: str, profile: str = DEFAULT_PROFILE) -> str:
    """The manifest of a report folder: a short header, then ``digest  path`` per table."""
    left_out = "; ".join(f"{t}: {', '.join(c)}" for t, c in sorted(RUN_MEASURES.items()))
    lines = [
        "# judgepanel report tables: SHA-256 of each table as `judgepanel verify` reads it",
        f"# kind: {size}",
        *([f"# profile: {profile}"] if profile != DEFAULT_PROFILE else []),
        f"# floats: {FLOAT_DIGITS} significant digits; columns left out: {left_out}",
    ]
    for rel in table_paths(outputs):
        lines.append(f"{table_digest(Path(outputs) / rel)}  {rel.as_posix()}")
    return "\n".join(lines) + "\n"


def write_manifest(outputs: Path, size: str, profile: str = DEFAULT_PROFILE) -> Path:
    """Write ``outputs/MANIFEST.sha256`` for ``profile``'s report in ``outputs``."""
    path = Path(outputs) / MANIFEST_NAME
    path.write_text(manifest_text(outputs, size, profile), encoding="utf-8")
    return path


@dataclass(frozen=True)
class Manifest:
    """A parsed manifest: the report's size, its profile and each table's digest by
    relative path."""

    size: str
    digests: dict[str, str]
    profile: str = DEFAULT_PROFILE


def read_manifest(path: Path) -> Manifest:
    """Parse a manifest file; a malformed line is an error naming the file and the line."""
    size, profile = "", DEFAULT_PROFILE
    digests: dict[str, str] = {}
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("# kind:"):
            size = line.split(":", 1)[1].strip()
        if line.startswith("# profile:"):
            profile = line.split(":", 1)[1].strip()
        if not line.strip() or line.startswith("#"):
            continue
        digest, sep, rel = line.partition("  ")
        if not sep or len(digest) != 64:
            raise ValueError(f"{path}:{number}: expected '<sha256>  <path>', got {line!r}")
        digests[rel] = digest
    if size not in SIZES:
        raise ValueError(f"{path}: no '# kind: full|quick' line")
    return Manifest(size, digests, profile)


def report_manifest(outputs: Path) -> Manifest:
    """The manifest the report in ``outputs`` wrote (its size and profile)."""
    path = Path(outputs) / MANIFEST_NAME
    if not path.exists():
        raise FileNotFoundError(f"{path}: no manifest; run `make report` (or QUICK=1) first")
    return read_manifest(path)


def report_size(outputs: Path) -> str:
    """Whether the report in ``outputs`` is quick or full, from the manifest it wrote."""
    return report_manifest(outputs).size


def first_difference(got: pd.DataFrame, want: pd.DataFrame) -> str:
    """The first cell (row, column) where two canonical tables differ, in words."""
    if list(got.columns) != list(want.columns):
        missing = [c for c in want.columns if c not in got.columns]
        extra = [c for c in got.columns if c not in want.columns]
        return f"columns differ (missing: {missing or 'none'}; extra: {extra or 'none'})"
    for i in range(min(len(got), len(want))):
        for col in want.columns:
            if got.iat[i, got.columns.get_loc(col)] != want.iat[i, want.columns.get_loc(col)]:
                key = f"row {i + 1}"
                if len(want.columns) and col != want.columns[0]:
                    key += f" ({want.columns[0]} = {want.iat[i, 0]})"
                g, w = got.iat[i, got.columns.get_loc(col)], want.iat[i, want.columns.get_loc(col)]
                return f"{key}, column {col}: {g!r}, expected {w!r}"
    return f"{len(got)} rows, expected {len(want)}"


def _reference_of(outputs: Path, made: Manifest, say: Callable[[str], None]) -> tuple[Path, bool]:
    """The committed reference of a report's size and profile, and whether it is the demo's
    standing in for a profile that has none: a report extended by another profile's
    notebooks (``make calibrate`` reports profile ``calibration`` into the demo's folder)
    is checked on the demo's tables.

    Raises:
        ValueError: no reference is committed for the report, in one line with the fix.
    """
    own = reference_dir(made.size, profile=made.profile)
    if (own / MANIFEST_NAME).is_file() or made.profile == DEFAULT_PROFILE:
        return own, False
    demo = reference_dir(made.size)
    if not (demo / MANIFEST_NAME).is_file():
        return own, False
    say(
        f"{outputs}: its manifest names profile {made.profile!r}, which has no committed "
        f"reference; its tables are checked against the demo's {made.size} report ({demo}), "
        f"and those of {made.profile}'s own notebooks are listed, not checked"
    )
    return demo, True


def verify(
    outputs: Path, reference: Path | None = None, say: Callable[[str], None] = lambda _: None
) -> list[str]:
    """Compare the report in ``outputs`` with the committed report of its size and profile.

    Returns one line per difference (an empty list when every table matches): a table
    whose digest differs, with its first differing cell; a table missing from either side.
    A report of a profile without a committed reference whose folder holds the demo's
    report (``make calibrate``) is checked on the demo's tables; ``say`` then tells so and
    lists the tables left unchecked.

    Raises:
        OSError: the report has no manifest.
        ValueError: no reference manifest is committed (or at ``reference``), in one line.
    """
    outputs = Path(outputs)
    got_manifest = report_manifest(outputs)
    size = got_manifest.size
    extended = False
    if reference is None:
        reference, extended = _reference_of(outputs, got_manifest, say)
    if not (Path(reference) / MANIFEST_NAME).is_file():
        raise ValueError(
            f"{Path(reference) / MANIFEST_NAME}: no committed reference of the {size} report "
            f"of profile {got_manifest.profile!r}; name one with --reference DIR, or write "
            "it from this report with `judgepanel verify --update`"
        )
    want = read_manifest(Path(reference) / MANIFEST_NAME)
    if want.size != size:
        return [f"{outputs} holds a {size} report; {reference} is the {want.size} one"]
    if want.profile != got_manifest.profile and not extended:
        return [
            f"{outputs} holds the report of profile {got_manifest.profile!r}; {reference} "
            f"is of profile {want.profile!r}"
        ]
    got = {rel.as_posix(): table_digest(outputs / rel) for rel in table_paths(outputs)}
    problems = []
    for rel, digest in want.digests.items():
        if rel not in got:
            problems.append(f"{rel}: missing from {outputs}")
        elif got[rel] != digest:
            ref_table = Path(reference) / "tables" / rel
            detail = (
                first_difference(canonical_table(outputs / rel), canonical_table(ref_table))
                if ref_table.exists()
                else "the reference table is not committed"
            )
            problems.append(f"{rel}: differs; {detail}")
    extra = [rel for rel in got if rel not in want.digests]
    if extended:
        for rel in extra:
            say(f"{rel}: of profile {got_manifest.profile}, not checked (no reference)")
        return problems
    problems += [f"{rel}: not in the committed {size} manifest" for rel in extra]
    return problems


def publish_reference(outputs: Path, root: Path | None = None) -> Path:
    """Copy a report's manifest and tables into the committed reference of its size.

    Run after a deliberate change to a table (``judgepanel verify --update``); the commit
    that changes a table then shows the new numbers cell by cell.
    """
    outputs = Path(outputs)
    made = report_manifest(outputs)
    dest = reference_dir(made.size, root, made.profile)
    if dest.exists():
        shutil.rmtree(dest)
    for rel in table_paths(outputs):
        target = dest / "tables" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        canonical_table(outputs / rel).to_csv(target, index=False, lineterminator="\n")
    text = manifest_text(outputs, made.size, made.profile)
    (dest / MANIFEST_NAME).write_text(text, encoding="utf-8")
    return dest
