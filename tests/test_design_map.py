"""DESIGN.md, the map of the code, names only what exists.

Every backticked path it names (a file ending in ``.py``, ``.md``, ``.yaml`` or ``.ipynb``,
or a folder under ``lib/``) must exist, read from the project root; and every function or
class it names with its file, written `` `name` (`path`) ``, must be defined in that file.
A module moved or renamed without the map fails here with the stale names listed.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DESIGN = ROOT / "DESIGN.md"

_TOKEN = re.compile(r"`([^`\s]+)`")
_FILE = re.compile(r"^[\w./-]+\.(?:py|md|yaml|ipynb)$")
_FOLDER = re.compile(r"^lib/[\w./-]+/$")
_NAMED = re.compile(r"`([A-Za-z_][\w.]*)` \(`([\w./-]+\.py)`\)")


def named_paths(text: str) -> list[str]:
    """The backticked path-like tokens of ``text``: files of the kinds above, and folders
    under ``lib/``; patterns (``*``, ``<name>``) are not paths and are left out."""
    return sorted(
        {t for t in _TOKEN.findall(text) if _FILE.match(t) or _FOLDER.match(t)},
    )


def missing_paths(text: str, root: Path = ROOT) -> list[str]:
    """The paths ``text`` names that do not exist under ``root``."""
    return [p for p in named_paths(text) if not (root / p).exists()]


def _defines(source: str, name: str) -> bool:
    """Whether ``source`` defines ``name``: a function, a class, or an assigned name (a
    module constant or a dataclass field)."""
    word = re.escape(name)
    pattern = rf"^\s*(?:async\s+def|def|class)\s+{word}\b|^\s*{word}\s*(?::|=)"
    return re.search(pattern, source, re.MULTILINE) is not None


def undefined_names(text: str, root: Path = ROOT) -> list[str]:
    """``name (path)`` pairs of ``text`` whose file exists but does not define the name
    (for ``Class.method``, the method)."""
    wrong = []
    for name, path in sorted(set(_NAMED.findall(text))):
        file = root / path
        if file.is_file() and not _defines(file.read_text(encoding="utf-8"), name.split(".")[-1]):
            wrong.append(f"{name} ({path})")
    return wrong


def test_design_md_is_at_the_root_and_names_many_paths():
    text = DESIGN.read_text(encoding="utf-8")
    assert len(named_paths(text)) >= 40  # the extraction found the map's paths
    assert len(_NAMED.findall(text)) >= 40


def test_every_path_design_md_names_exists():
    assert missing_paths(DESIGN.read_text(encoding="utf-8")) == []


def test_every_name_design_md_gives_with_its_file_is_defined_there():
    assert undefined_names(DESIGN.read_text(encoding="utf-8")) == []


def test_a_stale_path_or_name_is_found(tmp_path):
    # The same checks on a text that names what does not exist, beside what does.
    (tmp_path / "lib" / "pkg").mkdir(parents=True)
    (tmp_path / "lib" / "pkg" / "mod.py").write_text(
        "X: int = 1\n\nclass Kept:\n    def run(self):\n        pass\n"
    )
    text = (
        "See `lib/pkg/mod.py`, `lib/pkg/`, `lib/gone.py`, `lib/old/`, `README.md`, "
        "`notebooks/<name>.ipynb` and `lib/*/x.py`. `Kept` (`lib/pkg/mod.py`), "
        "`Kept.run` (`lib/pkg/mod.py`), `X` (`lib/pkg/mod.py`), "
        "`dropped` (`lib/pkg/mod.py`)."
    )
    assert missing_paths(text, tmp_path) == ["README.md", "lib/gone.py", "lib/old/"]
    assert undefined_names(text, tmp_path) == ["dropped (lib/pkg/mod.py)"]
