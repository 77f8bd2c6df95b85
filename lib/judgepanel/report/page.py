"""An executed notebook as a report page: title, header, folded parameters, no CDN, no paths.

nbconvert's lab page is extended by ``templates/report_page.html.j2``: the scripts it loads
from a CDN (require.js, MathJax, mermaid) are left out, the parameter cells are folded,
and a header with the link to the index, the simulated-data banner and the provenance box
opens the page. Every absolute path the executed notebook holds is rewritten to its place
in the project before the page is written.
"""

from __future__ import annotations

import os
import re
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

from judgepanel.core.paths import project_root

TEMPLATES = Path(__file__).parent / "templates"
BANNER_MARK = "jp-sim-banner"
BANNER_TEXT = (
    "The judges in this report are simulated models served by the project's judge "
    "simulator, and the images and human ratings come from its synthetic world. The numbers "
    "exercise the method; they are not a claim about any real model or dataset, and nothing "
    "in the simulation was tuned to reproduce a published figure."
)

_ENV = jinja2.Environment(
    loader=jinja2.FileSystemLoader(TEMPLATES),
    autoescape=True,
    trim_blocks=True,
    lstrip_blocks=True,
)


def static_text(name: str) -> str:
    """The text of a file of ``report/static`` (the report's own CSS and script)."""
    return resources.files("judgepanel.report").joinpath("static", name).read_text("utf-8")


def page_title(nb: Any, fallback: str) -> str:
    """The notebook's first markdown heading, else its file name."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return fallback


def path_replacements(extra: dict[Path, str] | None = None) -> list[tuple[str, str]]:
    """Absolute locations -> what a page shows instead, the longest first.

    The project folder becomes ``.``, the interpreter's prefix ``<python>`` and the home
    folder ``~``; ``extra`` adds the report's own locations (its outputs folder, the runs
    file's folder).
    """
    pairs: dict[str, str] = {}
    for path, shown in (extra or {}).items():
        pairs[str(Path(path).resolve())] = shown
    pairs.setdefault(str(project_root()), ".")
    for prefix in {sys.prefix, sys.base_prefix}:
        pairs.setdefault(str(Path(prefix).resolve()), "<python>")
        pairs.setdefault(prefix, "<python>")
    home = os.path.expanduser("~")
    if home not in ("/", "~"):
        pairs.setdefault(home, "~")
    return sorted(pairs.items(), key=lambda kv: len(kv[0]), reverse=True)


def scrub_paths(text: str, replacements: list[tuple[str, str]]) -> str:
    """Rewrite every absolute location of ``replacements`` (followed by ``/`` or a boundary)."""
    for absolute, shown in replacements:
        if not absolute or absolute == "/":
            continue
        # ``&`` ends one where a page escapes the quote after it (``&#39;``)
        text = re.sub(re.escape(absolute) + r"(?=[/\\\"'\s<,;:)\]}&]|$)", shown, text)
    return text


def _drop_inline_banner(nb: Any) -> None:
    """The notebook's own banner output goes: the page header shows it on the first screen."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        cell.outputs = [
            o for o in cell.get("outputs", []) if BANNER_MARK not in str(o.get("data", {}))
        ]


def render_page(
    notebook: Path,
    prov: dict[str, Any] | None,
    replacements: list[tuple[str, str]],
) -> Path:
    """Render an executed notebook to ``<notebook>.html`` as a report page."""
    # heavy (nbconvert's exporters and templates): loaded when a page is rendered
    import nbformat
    from nbconvert import HTMLExporter

    nb = nbformat.read(notebook, as_version=4)
    title = page_title(nb, notebook.stem)
    header = ""
    if prov is not None:
        _drop_inline_banner(nb)
        header = _ENV.get_template("page_header.html.j2").render(
            prov=prov, title=title, banner_text=BANNER_TEXT
        )
    exporter = HTMLExporter(
        template_name="lab",
        template_file=str(TEMPLATES / "report_page.html.j2"),
    )
    body, _ = exporter.from_notebook_node(
        nb,
        resources={
            "metadata": {"name": f"{title} · {prov['run'] if prov else notebook.parent.name}"},
            "page_header": header,
            "page_css": static_text("page.css"),
            "page_js": static_text("tables.js"),
        },
    )
    out = notebook.with_suffix(".html")
    out.write_text(scrub_paths(body, replacements), encoding="utf-8")
    return out
