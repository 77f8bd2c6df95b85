"""Checks every executed notebook passes: plain headlines, and no legend over data."""

from __future__ import annotations

import json
from pathlib import Path

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
