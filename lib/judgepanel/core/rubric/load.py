"""Reading a rubric from a single YAML file or a folder like the seed's ``rubric/``.

A file is checked as it is read: an unknown key, a scale whose ``min`` exceeds its
``max``, empty or repeated levels, a key declared twice, a tier band outside its scale
or a sham mapping that is not a derangement is a :class:`RubricError` naming the file and
the key. The rubric's hash is SHA-256 over the file's bytes; a folder keeps the seed's
hash (over the ``sha256sum`` listing of its files), so the seed's store keys stay put.
"""

from __future__ import annotations

import hashlib
import re
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from judgepanel.core.parsing import SCORE_MAX, SCORE_MIN
from judgepanel.core.paths import RUBRIC_DIR, project_root
from judgepanel.core.rubric import defaults
from judgepanel.core.rubric.model import Dimension, Holistic, Rubric, Scale
from judgepanel.errors import JudgepanelError

RUBRIC_FILES: tuple[str, ...] = ("prompts.yaml", "rubric.yaml")
SHAM_FILE = "sham.yaml"
PINNED_FILES: tuple[str, ...] = (*RUBRIC_FILES, SHAM_FILE)
"""Every frozen file of a rubric folder, as listed in its SHA256SUMS."""

TOP_KEYS = {"name", "description", "holistic", "dimensions", "prompts", "sham"}
DIMENSION_KEYS = {"title", "asks", "focus", "role", "scale", "levels", "tiers"}
PROMPT_KEYS = {"dimension_system", "dimension_user", "holistic"}
_BAND = re.compile(r"^\s*(-?\d+)\s*(?:-\s*(-?\d+)\s*)?$")


class RubricError(JudgepanelError, ValueError):
    """A rubric file that cannot be used, with the file and the key at fault."""


class _UniqueKeyLoader(yaml.SafeLoader):
    """A safe loader that refuses a mapping key given twice (YAML would keep the last)."""

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                line = key_node.start_mark.line + 1
                raise RubricError(f"{self.name}: line {line}: key {key!r} is given twice")
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _read_yaml(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RubricError(f"{path}: rubric file not found") from None
    loader = _UniqueKeyLoader(text)
    loader.name = str(path)
    try:
        return loader.get_single_data()
    except yaml.YAMLError as exc:
        raise RubricError(f"{path}: not valid YAML: {exc}") from None
    finally:
        loader.dispose()


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise RubricError(f"{where}: expected a mapping, got {type(value).__name__}")
    return value


def _no_unknown(spec: dict[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(str(k) for k in spec if k not in allowed)
    if unknown:
        raise RubricError(f"{where}: unknown key {', '.join(unknown)} (allowed: "
                          f"{', '.join(sorted(allowed))})")  # fmt: skip


def _int(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RubricError(f"{where}: expected an integer, got {value!r}")
    return value


def _levels(raw: Any, where: str) -> Scale:
    if isinstance(raw, list):
        pairs = [(name, i) for i, name in enumerate(raw)]
    elif isinstance(raw, dict):
        pairs = [(name, _int(v, f"{where}.{name}")) for name, v in raw.items()]
    else:
        raise RubricError(f"{where}: expected a list of names or a mapping name: value")
    if not pairs:
        raise RubricError(f"{where}: no levels")
    for name, _ in pairs:
        if not isinstance(name, str) or not name.strip():
            raise RubricError(
                f"{where}: level {name!r} is not a name (quote it: YAML reads yes, no, on "
                "and off as true and false)"
            )
    names = [str(n).strip() for n, _ in pairs]
    for label, items in (("name", [n.casefold() for n in names]), ("value", [v for _, v in pairs])):
        twice = sorted({str(x) for x in items if items.count(x) > 1})
        if twice:
            raise RubricError(f"{where}: level {label} {', '.join(twice)} given twice")
    return Scale.of_levels(tuple((n, v) for n, (_, v) in zip(names, pairs, strict=True)))


def _scale(spec: dict[str, Any], where: str) -> Scale:
    """A dimension's (or the holistic question's) scale; none declared is 1-10, marked
    as defaulted."""
    raw, levels = spec.get("scale"), spec.get("levels")
    if raw is not None and levels is not None:
        raise RubricError(f"{where}: give `scale` or `levels`, not both")
    if levels is not None:
        return _levels(levels, f"{where}.levels")
    if raw is None:
        return Scale(SCORE_MIN, SCORE_MAX, defaulted=True)
    raw = _mapping(raw, f"{where}.scale")
    _no_unknown(raw, {"min", "max", "levels"}, f"{where}.scale")
    if "levels" in raw:
        if set(raw) != {"levels"}:
            raise RubricError(f"{where}.scale: give `levels` or `min` and `max`, not both")
        return _levels(raw["levels"], f"{where}.scale.levels")
    if set(raw) != {"min", "max"}:
        raise RubricError(f"{where}.scale: give both `min` and `max`")
    lo, hi = _int(raw["min"], f"{where}.scale.min"), _int(raw["max"], f"{where}.scale.max")
    if lo > hi:
        raise RubricError(f"{where}.scale: min {lo} is greater than max {hi}")
    return Scale(lo, hi)


def _band_values(band: str, scale: Scale) -> list[int] | None:
    if scale.levels is not None:
        named = {n.casefold(): v for n, v in scale.levels}
        if band.strip().casefold() in named:
            return [named[band.strip().casefold()]]
    m = _BAND.match(band)
    if not m:
        return None
    return [int(m.group(1)), int(m.group(2) or m.group(1))]


def _tiers(raw: Any, scale: Scale, where: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    out = []
    for band, criteria in _mapping(raw, where).items():
        values = _band_values(str(band), scale)
        allowed = {v for _, v in scale.levels} if scale.levels else None
        if values is None or any(
            not scale.min <= v <= scale.max or (allowed is not None and v not in allowed)
            for v in values
        ):
            raise RubricError(f"{where}.{band}: tier band outside the scale {scale.span()}")
        if isinstance(criteria, str):
            criteria = [criteria]
        if not isinstance(criteria, list) or not all(isinstance(c, str) for c in criteria):
            raise RubricError(f"{where}.{band}: expected a list of criteria (strings)")
        out.append((str(band), tuple(criteria)))
    return tuple(out)


def _dimension(key: str, spec: Any, where: str) -> Dimension:
    spec = _mapping(spec, where)
    _no_unknown(spec, DIMENSION_KEYS, where)
    if "asks" in spec and "focus" in spec:
        raise RubricError(f"{where}: give `asks` or `focus` (its older name), not both")
    asks = spec.get("asks", spec.get("focus"))
    if not isinstance(asks, str) or not asks.strip():
        raise RubricError(f"{where}.asks: say what the dimension asks")
    scale = _scale(spec, where)
    tiers = _tiers(spec["tiers"], scale, f"{where}.tiers") if spec.get("tiers") else ()
    title = spec.get("title", key)
    role = spec.get("role", defaults.DEFAULT_ROLE)
    for field, value in (("title", title), ("role", role)):
        if not isinstance(value, str):
            raise RubricError(f"{where}.{field}: expected a string")
    return Dimension(str(key), title, asks, role, scale, tiers)


def _dimensions(raw: Any, where: str) -> dict[str, Dimension]:
    dims = _mapping(raw, f"{where}: dimensions")
    if not dims:
        raise RubricError(f"{where}: dimensions: a rubric needs at least one dimension")
    if "holistic" in dims:
        raise RubricError(f"{where}: dimensions.holistic: the name is the holistic question's")
    return {str(k): _dimension(str(k), v, f"{where}: dimensions.{k}") for k, v in dims.items()}


def _derangement(raw: Any, keys: tuple[str, ...], where: str) -> dict[str, str]:
    raw = _mapping(raw, where)
    sham = {str(k): str(v) for k, v in raw.items()}
    if sorted(sham) != sorted(keys) or sorted(sham.values()) != sorted(keys):
        raise RubricError(f"{where}: the derangement must map the dimensions onto themselves")
    kept = [d for d, other in sham.items() if d == other]
    if kept:
        raise RubricError(f"{where}: not a derangement: {kept} keep their own criteria")
    return sham


def _holistic(raw: Any, text: str | None, where: str) -> Holistic:
    spec = {} if raw is True else _mapping(raw, where)
    _no_unknown(spec, {"text", "scale"}, where)
    scale = _scale(spec, where)
    if scale.levels is not None:
        raise RubricError(f"{where}.scale: the holistic scale takes `min` and `max`")
    text = spec.get("text", text)
    if text is None:
        text = defaults.HOLISTIC.format(min=scale.min, max=scale.max)
    if not isinstance(text, str):
        raise RubricError(f"{where}.text: expected a string")
    return Holistic(text, scale)


def _prompts(raw: Any, where: str) -> dict[str, str]:
    spec = _mapping(raw, where) if raw is not None else {}
    _no_unknown(spec, PROMPT_KEYS, where)
    for key, value in spec.items():
        if not isinstance(value, str):
            raise RubricError(f"{where}.{key}: expected a string")
    return spec


def sha256sums_text(directory: Path, files: tuple[str, ...] = PINNED_FILES) -> str:
    """The ``sha256sum``-format listing of a rubric folder's files, from their bytes."""
    lines = []
    for name in files:
        digest = hashlib.sha256((directory / name).read_bytes()).hexdigest()
        lines.append(f"{digest}  {name}\n")
    return "".join(lines)


def _load_file(path: Path) -> Rubric:
    raw = _mapping(_read_yaml(path), str(path))
    _no_unknown(raw, TOP_KEYS, str(path))
    dims = _dimensions(raw.get("dimensions"), str(path))
    prompts = _prompts(raw.get("prompts"), f"{path}: prompts")
    holistic = None
    if raw.get("holistic") is not None:
        holistic = _holistic(raw["holistic"], prompts.get("holistic"), f"{path}: holistic")
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    sham = None
    if raw.get("sham") is not None:
        spec = raw["sham"]
        if isinstance(spec, dict) and set(spec) == {"derangement"}:
            spec = spec["derangement"]
        sham = _derangement(spec, tuple(dims), f"{path}: sham")
    return Rubric(
        dimensions=dims,
        holistic=holistic,
        sha256=sha,
        source=str(path),
        name=str(raw.get("name") or path.stem),
        system_template=prompts.get("dimension_system"),
        user_template=prompts.get("dimension_user"),
        sham=sham,
        # Sham calls are keyed apart from the real rubric's, as the seed's are.
        sham_sha256=hashlib.sha256(f"sham {sha}".encode("ascii")).hexdigest() if sham else "",
    )


def _load_folder(root: Path) -> Rubric:
    rubric_file = root / "rubric.yaml"
    raw = _mapping(_read_yaml(rubric_file), str(rubric_file))
    _no_unknown(raw, TOP_KEYS - {"prompts", "sham"}, str(rubric_file))
    dims = _dimensions(raw.get("dimensions"), str(rubric_file))
    prompts_file = root / "prompts.yaml"
    prompts = _prompts(
        _read_yaml(prompts_file) if prompts_file.exists() else None, str(prompts_file)
    )
    holistic = None
    if raw.get("holistic") is not None or "holistic" in prompts:
        holistic = _holistic(
            raw.get("holistic") or {}, prompts.get("holistic"), f"{rubric_file}: holistic"
        )
    present = tuple(f for f in RUBRIC_FILES if (root / f).exists())
    sham, sham_sha = None, ""
    if (root / SHAM_FILE).exists():
        sham_file = root / SHAM_FILE
        spec = _mapping(_read_yaml(sham_file), str(sham_file))
        _no_unknown(spec, {"derangement"}, str(sham_file))
        sham = _derangement(spec.get("derangement"), tuple(dims), f"{sham_file}: derangement")
        listing = sha256sums_text(root, (*present, SHAM_FILE)).encode("ascii")
        sham_sha = hashlib.sha256(listing).hexdigest()
    return Rubric(
        dimensions=dims,
        holistic=holistic,
        sha256=hashlib.sha256(sha256sums_text(root, present).encode("ascii")).hexdigest(),
        source=str(root),
        name=str(raw.get("name") or root.name),
        system_template=prompts.get("dimension_system"),
        user_template=prompts.get("dimension_user"),
        sham=sham,
        sham_sha256=sham_sha,
    )


def default_rubric_path() -> Path:
    """The project's rubric: the ``rubric/`` folder at the project root."""
    return project_root() / RUBRIC_DIR


@cache
def _load(path: str, stamp: tuple[int, int]) -> Rubric:
    p = Path(path)
    return _load_folder(p) if p.is_dir() else _load_file(p)


def load_rubric(path: str | Path | None = None) -> Rubric:
    """The rubric of a YAML file or a rubric folder (default: the project's ``rubric/``).

    Loaded once per path and version of the file (its modification time and size).

    Raises:
        RubricError: the path does not exist, or the rubric is malformed.
    """
    p = Path(path) if path else default_rubric_path()
    p = p.resolve()
    if not p.exists():
        raise RubricError(f"{p}: no rubric file or folder")
    probe = p / "rubric.yaml" if p.is_dir() else p
    if not probe.exists():
        raise RubricError(f"{probe}: a rubric folder needs its rubric.yaml")
    st = probe.stat()
    return _load(str(p), (st.st_mtime_ns, st.st_size))
