"""The report a reviewer reads: page header, folded parameters, no CDN or machine path,
tables that page and scroll, one family palette, and a command line that guides."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import nbformat
import numpy as np
import pandas as pd
import pytest

from judgepanel.cli import build_parser, main
from judgepanel.cli.check import check_command
from judgepanel.cli.report import parse_overrides, report_command
from judgepanel.core.config import load_config
from judgepanel.report import nbtools
from judgepanel.report.page import path_replacements, render_page, scrub_paths
from judgepanel.report.provenance import provenance

matplotlib.use("Agg")

PROV = {
    "run": "r-a",
    "profile": "p",
    "simulated": True,
    "quick": True,
    "datasets": ["a"],
    "n_items": {"a": 40},
    "item_nouns": {"a": "tasks"},
    "seed": 0,
    "world_seeds": {"a": 7},
    "n_resamples": 500,
    "overrides": {"n_resamples": 500},
    "commit": "abc1234567",
    "store": "store.sqlite",
    "store_hash": "0123456789ab",
    "data_hash": "ba9876543210",
    "date": "2026-12-01 10:00 UTC",
}


def executed_notebook(tmp: Path, secret_dir: Path) -> Path:
    """An executed notebook as papermill leaves it: two parameter cells holding a path."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# 09 · A page title\n\nWhat this tests."),
        nbformat.v4.new_code_cell("run = 'x'", metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell(
            f"store = '{secret_dir}/data/store.sqlite'",
            metadata={"tags": ["injected-parameters"]},
        ),
        nbformat.v4.new_code_cell("print(store)"),
    ]
    banner = nbformat.v4.new_output("display_data", {"text/html": nbtools.SIMULATED_BANNER})
    printed = nbformat.v4.new_output("stream", name="stdout", text=f"{secret_dir}/data/x.csv\n")
    nb.cells[3].outputs = [banner, printed]
    path = tmp / "09_page.ipynb"
    nbformat.write(nb, path)
    return path


def test_a_page_has_title_header_folded_parameters_and_no_cdn_or_path(tmp_path: Path) -> None:
    machine = tmp_path / "machine" / "checkout"
    page = render_page(
        executed_notebook(tmp_path, machine),
        PROV,
        path_replacements({machine: "."}),
    ).read_text(encoding="utf-8")
    assert "<title>09 · A page title · r-a</title>" in page
    assert "cdnjs" not in page and "<script src=" not in page
    assert str(machine) not in page and str(tmp_path) not in page
    assert "./data/x.csv" in page
    # The banner and the provenance come before the first cell; the notebook's own banner goes.
    body = page[page.index("<main>") :]
    assert body.index("Simulated data.") < body.index("<h1")
    assert body.count("jp-sim-banner") == 1
    assert "Quick run." in body
    for shown in (
        "r-a",
        "abc1234567",
        "0123456789ab",
        "ba9876543210",
        "40 tasks with stored answers",
        "n_resamples=500",
    ):
        assert shown in body, shown
    assert body.count('<details class="jp-params">') == 2
    assert "../index.html" in body


def test_scrub_keeps_unrelated_paths() -> None:
    text = "/home/u/proj/data and /home/u/project-other and /home/u/proj"
    assert scrub_paths(text, [("/home/u/proj", ".")]) == "./data and /home/u/project-other and ."


def test_long_tables_page_short_ones_stay_flat_and_missing_is_a_dash() -> None:
    long = pd.DataFrame({"family": [f"f{i}" for i in range(40)], "rho": np.linspace(0, 1, 40)})
    short = pd.DataFrame({"family": ["a", "b"], "rho": [0.5, np.nan], "note": ["x", None]})
    html_long = nbtools.table_html(long, "long", caption="Long")
    html_short = nbtools.table_html(short, "short", caption="Short", missing="too few items")
    assert "jp-long" in html_long and "jp-long" not in html_short
    assert "href='tables/long.csv'" in html_long and "40 rows" in html_long
    assert "overflow-x:auto" in html_short
    assert "nan" not in html_short.lower().replace("nan-", "")
    assert html_short.count(nbtools.MISSING) >= 3  # two cells and the note
    assert "too few items" in html_short


def test_the_table_csv_is_the_frame_at_six_significant_digits(tmp_path: Path) -> None:
    nb = nbtools.Notebook("r", "n", tmp_path / "tables", tmp_path / "figures", simulated=False)
    df = pd.DataFrame({"a": [1.23456789, np.nan], "b": ["x", None], "n": [3, 4]})
    nb.table(df, "t")
    assert (tmp_path / "tables" / "t.csv").read_text() == "a,b,n\n1.23457,x,3\n,,4\n"


def test_family_colours_do_not_depend_on_which_families_a_figure_shows() -> None:
    every = nbtools.family_palette()
    some = nbtools.family_palette(["cobalt", "aurora", "newcomer"])
    assert some["cobalt"] == every["cobalt"] and some["aurora"] == every["aurora"]
    assert some["newcomer"] not in {every[f] for f in nbtools.FAMILY_ORDER[:5]}
    assert len({every[f] for f in nbtools.FAMILY_ORDER}) == len(nbtools.FAMILY_ORDER)


def test_a_legend_moves_beside_a_one_plot_figure(tmp_path: Path) -> None:
    nb = nbtools.Notebook("r", "n", tmp_path / "tables", tmp_path / "figures", simulated=False)
    fig, ax = plt.subplots()
    for i in range(3):
        ax.plot(range(10), np.arange(10) * i, label=f"line {i}")
    ax.legend(loc="best")
    nbtools._legend_outside(fig)
    anchor = ax.get_legend().get_bbox_to_anchor().transformed(ax.transAxes.inverted())
    assert anchor.x0 > 1.0
    nbtools.integer_ticks(ax, "y")
    ticks = ax.get_yticks()
    assert np.allclose(ticks, np.round(ticks))
    nb.figure(fig, "f", caption="Look at the lines.")
    assert (tmp_path / "figures" / "f.png").exists()


def test_a_figure_is_drawn_once_and_shown_at_its_screen_size() -> None:
    """The page shows the saved PNG (drawn at savefig.dpi), sized as the figure's own dpi
    would draw it, instead of having the inline backend draw the figure again."""
    with matplotlib.rc_context({"figure.dpi": 110, "savefig.dpi": 130}):
        fig, ax = plt.subplots(figsize=(4.0, 3.0))
        ax.plot(range(5))
        png = nbtools.figure_png(fig)
        shown = nbtools.shown_png(png, fig)
        plt.close(fig)
    width = int.from_bytes(png[16:20], "big")
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and 0.8 * 4 * 130 < width <= 4 * 130
    assert shown.data == png and shown.width == round(width * 110 / 130)


def test_every_figure_of_the_report_is_shown_as_its_saved_file(small_report: Path) -> None:
    """Each figure a page shows is the PNG in its figures folder, byte for byte, with a
    display width (the drawing is made once, and the file is what the page shows)."""
    import base64

    shown = 0
    for executed in sorted(small_report.glob("test-*/*.ipynb")):
        nb = nbformat.read(executed, as_version=4)
        images = [
            (base64.b64decode(out["data"]["image/png"]), out.get("metadata", {}))
            for cell in nb.cells
            if cell.cell_type == "code"
            for out in cell.get("outputs", [])
            if "image/png" in out.get("data", {})
        ]
        files = {p.read_bytes() for p in (executed.parent / "figures").glob("*.png")}
        for data, meta in images:
            assert data in files, f"{executed.name}: a figure shown is not a saved file"
            assert meta.get("image/png", {}).get("width", 0) > 0, executed.name
        shown += len(images)
    assert shown >= 20, shown


def _runs_file(tmp: Path) -> Path:
    from test_report import runs_file

    return runs_file(tmp, tmp / "eva")


def test_provenance_names_only_what_differs_and_no_machine_path(tmp_path: Path) -> None:
    path = _runs_file(tmp_path)
    text = path.read_text().replace(
        "runs:\n", "parameters:\n  n_resamples: 100\n  seed: 0\nruns:\n"
    )
    path.write_text(text)
    config = load_config(path)
    record = provenance(config, config.run("r-a"), tmp_path, overrides={"seed": 3})
    assert record["overrides"] == {"seed": 3}
    assert record["seed"] == 3 and record["n_resamples"] == 100
    assert record["n_items"] == {"a": 0} and record["store_hash"] == "no store"
    assert set(record["item_nouns"].values()) <= {"images", "tasks", "questions"}
    assert str(tmp_path) not in json.dumps(record)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--run", "typo"], "no run 'typo'; runs are: r-a, r-b"),
        (["--only", "99"], "--only 99 matches no notebook"),
        (["-p", "nope=1"], "-p nope: not a parameter"),
        (["-p", "novalue"], "expected KEY=VALUE"),
        (["--jobs", "0"], "--jobs 0: at least one notebook must be able to run"),
    ],
)
def test_report_mistakes_are_clean_errors(tmp_path: Path, capsys, argv, says) -> None:
    path = _runs_file(tmp_path)
    args = build_parser().parse_args(
        ["report", "--runs-file", str(path), "--profile", "p", "--outputs", str(tmp_path), *argv]
    )
    assert report_command(args) == 1
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err


def test_a_run_of_another_profile_is_refused(tmp_path: Path, capsys) -> None:
    from judgepanel.core.paths import project_root

    args = build_parser().parse_args(
        ["report", "--runs-file", str(project_root() / "papermill_runs.yaml"),
         "--profile", "paper", "--run", "demo-para", "--outputs", str(tmp_path)]
    )  # fmt: skip
    assert report_command(args) == 1
    assert "belongs to profile 'demo', not 'paper'" in capsys.readouterr().err


def test_overrides_are_read_as_yaml() -> None:
    assert parse_overrides(["n_resamples=500", "seed=3", "name=x"]) == {
        "n_resamples": 500,
        "seed": 3,
        "name": "x",
    }


def test_list_shows_profiles_runs_datasets_notebooks(tmp_path: Path, capsys) -> None:
    assert main(["list", "--runs-file", str(_runs_file(tmp_path))]) == 0
    out = capsys.readouterr().out
    for word in ("profiles", "r-a", "r-b", "datasets", "missing", "notebooks", "00_scoring"):
        assert word in out, word


def test_check_reads_datasets_and_asks_the_endpoint_for_models(
    small_project, sim_server, monkeypatch, capsys
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", sim_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-check-test")
    args = build_parser().parse_args(
        ["check", "--runs-file", str(small_project.runs_file), "--profile", "test"]
    )
    assert check_command(args) == 0
    out = capsys.readouterr().out
    assert "FAIL" not in out and "sk-check-test" not in out
    broken = small_project.runs_file.read_text().replace("sim-aurora-v1", "sim-aurora-typo")
    path = small_project.root / "broken-models.yaml"
    path.write_text(broken)
    monkeypatch.delenv("OPENAI_API_KEY")
    args = build_parser().parse_args(["check", "--runs-file", str(path), "--profile", "test"])
    assert check_command(args) == 1
    out = capsys.readouterr().out
    assert "FAIL  OPENAI_API_KEY" in out
    monkeypatch.setenv("OPENAI_API_KEY", "sk-check-test")
    assert check_command(args) == 1
    assert "sim-aurora-typo not listed" in capsys.readouterr().out


def test_the_explorer_has_a_row_per_item_with_label_thumbnail_and_answers(
    small_project, tmp_path: Path
) -> None:
    from markupsafe import escape

    from judgepanel.core.store import Store
    from judgepanel.report.explorer import build_explorer

    profile = small_project.config.profile("test")
    page = build_explorer(profile, "eva", tmp_path)
    assert page == tmp_path / "explorer" / "test-eva.html"
    html = page.read_text(encoding="utf-8")
    with Store(profile.store, readonly=True) as store:
        calls = store.frame(dataset="eva", columns=["item", "answer"])
    items = calls["item"].unique()
    assert html.count("<details>") == len(items)
    assert html.count("data:image/jpeg;base64,") == len(items)
    assert "jp-long" in html and "<script src=" not in html
    assert str(small_project.root) not in html
    some_answer = str(calls["answer"].dropna().iloc[0])[:40]
    assert str(escape(some_answer)) in html


def test_a_quick_report_keeps_the_files_and_shrinks_the_repetitions(tmp_path: Path) -> None:
    from judgepanel.core.paths import project_root
    from judgepanel.report.execute import QUICK_DESIGN, QUICK_PARAMETERS, quick_runs_file

    full = load_config(project_root() / "papermill_runs.yaml")
    quick = load_config(quick_runs_file(full, tmp_path / "outputs"))
    for name, profile in full.profiles.items():
        assert quick.profile(name).store == profile.store
        for d, ref in profile.datasets.items():
            assert quick.profile(name).dataset(d).root == ref.root
    for kind, design in full.scoring.items():
        small = quick.design(kind)
        assert small.holistic_k == min(design.holistic_k, QUICK_DESIGN["holistic_k"])
        assert small.dimension_r == min(design.dimension_r, QUICK_DESIGN["dimension_r"])
    assert quick.design("eva").holistic_k < full.design("eva").holistic_k
    for key, cap in QUICK_PARAMETERS.items():
        assert quick.parameters[key] == cap
    assert set(quick.runs) == set(full.runs)
