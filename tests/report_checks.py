"""Checks every executed notebook passes: plain headlines, honest prose, no legend over data."""

from __future__ import annotations

import json
from pathlib import Path

from judgepanel.claims.wording import prose_problems
from judgepanel.report.glossary import unbracketed_jargon

LEGEND_WARNING = "covers the data of"
"""What ``Notebook.figure`` warns when a legend still covers a plot."""


def assert_reads_well(run_dir: Path, notebook: str) -> None:
    """The notebook's headlines explain their short terms, and no figure hides data."""
    heads = json.loads((run_dir / "headlines.json").read_text(encoding="utf-8"))
    texts = [h["text"] for h in heads.get(notebook, {}).values()]
    assert texts, f"{notebook} records no headline"
    for text in texts:
        assert unbracketed_jargon(text) == [], text
    executed = (run_dir / f"{notebook}.ipynb").read_text(encoding="utf-8")
    assert LEGEND_WARNING not in executed, notebook
    problems = [
        f"{where}: {p}"
        for where, text in computed_sentences(run_dir, notebook)
        for p in prose_problems(text)
    ]
    assert problems == [], "\n".join(problems)


def computed_sentences(run_dir: Path, notebook: str) -> list[tuple[str, str]]:
    """Every sentence the notebook computed: its headlines and its markdown outputs."""
    heads = json.loads((run_dir / "headlines.json").read_text(encoding="utf-8"))
    out = [(f"headline {k}", str(h["text"])) for k, h in heads.get(notebook, {}).items()]
    nb = json.loads((run_dir / f"{notebook}.ipynb").read_text(encoding="utf-8"))
    for i, cell in enumerate(nb["cells"]):
        for output in cell.get("outputs", []):
            md = output.get("data", {}).get("text/markdown")
            if md:
                out.append((f"cell {i}", "".join(md)))
    return out
