# ruff: noqa: E501 (the table of cases reads best one case a line)
"""Every command, given a bad path, ends with one line naming it, no traceback and the exit
code of bad input (1).

The commands are listed from the parser itself (``build_parser``), so a new command or
path argument without a case here fails :func:`test_every_path_argument_has_a_case`. Each
path argument is given a missing path, an unreadable one (skipped as root, who reads
anything) and one of the wrong kind (a folder where a file is expected, a file where a
folder is); the other arguments are good, so the error is the bad path's.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from release_files import write_generic

from judgepanel.cli import build_parser, main
from judgepanel.cli.exit_codes import BAD_INPUT
from judgepanel.core.paths import project_root

RUBRIC = project_root() / "rubric"
RUNS = project_root() / "papermill_runs.yaml"
AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0

FILE, FOLDER, EITHER, OUT_FILE, OUT_FOLDER = "file", "folder", "either", "out-file", "out-folder"
"""What a path argument names: a file or folder read, either, a file or folder written."""


def _parser_paths() -> set[tuple[str, str]]:
    """(command, path argument) for every argument of every command that takes a path."""
    found: set[tuple[str, str]] = set()

    def walk(parser: argparse.ArgumentParser, prefix: list[str]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, [*prefix, name])
                return
        for action in parser._actions:
            is_path = action.type is Path or "PATH" in str(action.metavar or "")
            if is_path or action.dest == "dataset":
                found.add(
                    (
                        " ".join(prefix),
                        action.option_strings[-1:][0] if action.option_strings else action.dest,
                    )
                )

    walk(build_parser(), [])
    return found


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> dict[str, Path]:
    """Good values for every argument that is not under test."""
    root = tmp_path_factory.mktemp("good")
    dataset = write_generic(root / "photos")
    rows = [
        (f"img{i:02d}", judge, "holistic", 1 + (i + j) % 10)
        for i in range(8)
        for j, judge in enumerate(("lens", "prism"))
    ]
    answers = root / "answers.csv"
    pd.DataFrame(rows, columns=["image_id", "judge", "dimension", "score"]).to_csv(
        answers, index=False
    )
    store = root / "store.sqlite"
    argv = ["import", "answers", str(answers), "--dataset", f"ratings:{dataset}",
            "--rubric", str(RUBRIC), "--store", str(store)]  # fmt: skip
    assert main(argv) == 0
    outputs = root / "outputs"  # a report's outputs, as far as verify reads them first
    outputs.mkdir()
    (outputs / "MANIFEST.sha256").write_text("# kind: quick\n", encoding="utf-8")
    return {
        "dataset": dataset,
        "answers": answers,
        "store": store,
        "root": root,
        "outputs": outputs,
    }


Case = tuple[str, str, str, Callable[[dict[str, Path], str], list[str]]]
"""(command, argument, what it names, argv with the argument's value)."""

FAMS = ["--families", "aurora", "--models", "sim-aurora-v1"]
CASES: list[Case] = [
    ("data describe", "--dataset", FOLDER, lambda g, p: ["data", "describe", "--dataset", f"ratings:{p}"]),
    ("data describe", "--rubric", EITHER, lambda g, p: ["data", "describe", "--dataset", f"ratings:{g['dataset']}", "--rubric", p]),
    ("agree", "--dataset", FOLDER, lambda g, p: ["agree", "--dataset", f"ratings:{p}", "--store", str(g["store"])]),
    ("agree", "--store", FILE, lambda g, p: ["agree", "--dataset", f"ratings:{g['dataset']}", "--store", p]),
    ("agree", "--answers", FILE, lambda g, p: ["agree", "--dataset", f"ratings:{g['dataset']}", "--answers", p, "--rubric", str(RUBRIC)]),
    ("agree", "--rubric", EITHER, lambda g, p: ["agree", "--dataset", f"ratings:{g['dataset']}", "--answers", str(g["answers"]), "--rubric", p]),
    ("score", "--runs-file", FILE, lambda g, p: ["score", "--runs-file", p, "--run", "demo-eva", "--dry-run"]),
    ("score", "--dataset", FOLDER, lambda g, p: ["score", "--dataset", f"ratings:{p}", *FAMS, "--store", str(g["store"]), "--dry-run"]),
    ("score", "--store", OUT_FILE, lambda g, p: ["score", "--dataset", f"ratings:{g['dataset']}", *FAMS, "--store", p, "--dry-run"]),
    ("score", "--rubric", EITHER, lambda g, p: ["score", "--dataset", f"ratings:{g['dataset']}", *FAMS, "--store", str(g["store"]), "--rubric", p, "--dry-run"]),
    ("fit", "--runs-file", FILE, lambda g, p: ["fit", "--run", "demo-eva", "--arm", "H_gb", "--runs-file", p, "--out", str(g["root"] / "m.joblib")]),
    ("fit", "--dataset", FOLDER, lambda g, p: ["fit", "--run", "demo-eva", "--arm", "H_gb", "--dataset", f"ratings:{p}", "--out", str(g["root"] / "m.joblib")]),
    ("predict", "--model", FILE, lambda g, p: ["predict", "--model", p, "--dataset", f"ratings:{g['dataset']}", "--out", str(g["root"] / "p.csv")]),
    ("status", "--store", FILE, lambda g, p: ["status", "--store", p]),
    ("export", "--store", FILE, lambda g, p: ["export", "--store", p, "--out", str(g["root"] / "e.csv")]),
    ("export", "--out", OUT_FILE, lambda g, p: ["export", "--store", str(g["store"]), "--long", "--out", p]),
    ("visionq pairs", "--root", FOLDER, lambda g, p: ["visionq", "pairs", "--root", p, "--out", str(g["root"] / "v.csv")]),
    ("visionq pairs", "--runs-file", FILE, lambda g, p: ["visionq", "pairs", "--run", "demo-visionq", "--runs-file", p, "--out", str(g["root"] / "v.csv")]),
    ("import vab-results", "files", FILE, lambda g, p: ["import", "vab-results", p, "--out", str(g["root"] / "vab.csv")]),
    ("import visionq-predictions", "files", FILE, lambda g, p: ["import", "visionq-predictions", p, "--out", str(g["root"] / "vq.csv")]),
    ("import scores", "file", FILE, lambda g, p: ["import", "scores", p, "--dataset", f"ratings:{g['dataset']}", "--out", str(g["root"] / "s.csv")]),
    ("import scores", "--dataset", FOLDER, lambda g, p: ["import", "scores", str(g["answers"]), "--dataset", f"ratings:{p}", "--out", str(g["root"] / "s.csv")]),
    ("import answers", "file", FILE, lambda g, p: ["import", "answers", p, "--dataset", f"ratings:{g['dataset']}", "--rubric", str(RUBRIC), "--store", str(g["root"] / "a.sqlite")]),
    ("import answers", "--dataset", FOLDER, lambda g, p: ["import", "answers", str(g["answers"]), "--dataset", f"ratings:{p}", "--rubric", str(RUBRIC), "--store", str(g["root"] / "a.sqlite")]),
    ("import answers", "--rubric", EITHER, lambda g, p: ["import", "answers", str(g["answers"]), "--dataset", f"ratings:{g['dataset']}", "--rubric", p, "--store", str(g["root"] / "a.sqlite")]),
    ("import answers", "--store", OUT_FILE, lambda g, p: ["import", "answers", str(g["answers"]), "--dataset", f"ratings:{g['dataset']}", "--rubric", str(RUBRIC), "--store", p]),
    ("batch export", "--runs-file", FILE, lambda g, p: ["batch", "export", "--run", "demo-eva", "--runs-file", p, "--out", str(g["root"] / "batch")]),
    ("batch import", "file", FILE, lambda g, p: ["batch", "import", p, "--store", str(g["store"])]),
    ("report", "--runs-file", FILE, lambda g, p: ["report", "--runs-file", p, "--run", "demo-eva"]),
    ("report", "--dataset", FOLDER, lambda g, p: ["report", "--dataset", f"ratings:{p}", "--rubric", str(RUBRIC), "--out", str(g["root"] / "r")]),
    ("report", "--rubric", EITHER, lambda g, p: ["report", "--dataset", f"ratings:{g['dataset']}", "--rubric", p, "--out", str(g["root"] / "r")]),
    ("report", "--answers", FILE, lambda g, p: ["report", "--dataset", f"ratings:{g['dataset']}", "--rubric", str(RUBRIC), "--answers", p, "--out", str(g["root"] / "r")]),
    ("report", "--out", OUT_FOLDER, lambda g, p: ["report", "--dataset", f"ratings:{g['dataset']}", "--rubric", str(RUBRIC), "--answers", str(g["answers"]), "--out", p]),
    ("list", "--runs-file", FILE, lambda g, p: ["list", "--runs-file", p]),
    ("check", "--runs-file", FILE, lambda g, p: ["check", "--profile", "demo", "--runs-file", p]),
    ("verify", "outputs", FOLDER, lambda g, p: ["verify", p]),
    ("verify", "--reference", FOLDER, lambda g, p: ["verify", str(g["outputs"]), "--reference", p]),
]  # fmt: skip

NOT_WALKED: dict[tuple[str, str], str] = {
    ("predict", "--images"): "needs a fitted model file first (predict --model is walked)",
    ("predict", "--dataset"): "needs a fitted model file first (predict --model is walked)",
    ("predict", "--out"): "needs a fitted model file first (predict --model is walked)",
    ("predict", "--store"): "needs a fitted model file first (predict --model is walked)",
    ("predict", "--rubric"): "needs a fitted model file first (predict --model is walked)",
    ("import vab-results", "--out"): "needs a valid VAB results file first",
    ("import visionq-predictions", "--out"): "needs a valid VisionQ predictions file first",
    ("import scores", "--out"): "needs a scores file of the dataset first",
    ("visionq pairs", "--out"): "needs a VisionQ release first",
    ("batch export", "--out"): "needs a runs file whose profile batches",
    ("batch export", "--store"): "needs a runs file whose profile batches",
    ("batch import", "--store"): "needs a batch results file first",
    ("batch import", "--runs-file"): "needs a batch results file first",
    ("export", "--dataset"): "a dataset key of the store, not a path",
    ("fit", "--out"): "needs a scored run first (fit --runs-file and --dataset are walked)",
}
"""Path arguments the walk leaves out, and why: each needs a valid file of another
argument that a test cannot make small (their own tests cover them)."""


def test_every_path_argument_has_a_case() -> None:
    walked = {(c, a) for c, a, _, _ in CASES}
    missing = sorted(_parser_paths() - walked - set(NOT_WALKED))
    assert missing == [], f"path arguments without a bad-path case: {missing}"


def _bad_paths(tmp: Path, names: str) -> list[tuple[str, Path]]:
    """(what is wrong, the path) for an argument naming ``names``."""
    out: list[tuple[str, Path]] = []
    if names not in (OUT_FILE, OUT_FOLDER):
        out.append(("missing", tmp / "nowhere" / "absent.csv"))
    if names in (FILE, OUT_FILE):
        folder = tmp / "a-folder"
        folder.mkdir()
        out.append(("a folder", folder))
    if names in (FOLDER, OUT_FOLDER):
        file = tmp / "a-file.txt"
        file.write_text("not a folder\n", encoding="utf-8")
        out.append(("a file", file))
    if not AS_ROOT and names in (FILE, FOLDER, EITHER):
        locked = tmp / ("locked.csv" if names == FILE else "locked")
        if names == FILE:
            locked.write_text("image_id\n", encoding="utf-8")
        else:
            locked.mkdir()
        locked.chmod(0)
        out.append(("unreadable", locked))
    return out


@pytest.mark.parametrize(
    ("command", "argument", "names", "argv"), CASES, ids=[f"{c}:{a}" for c, a, _, _ in CASES]
)
def test_a_bad_path_is_one_line_naming_it(good, tmp_path, capsys, monkeypatch, command, argument, names, argv) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)  # nothing may be sent
    for what, path in _bad_paths(tmp_path, names):
        try:
            code = main(argv(good, str(path)))
        except SystemExit as exc:  # argparse's own refusal
            code = exc.code
        except Exception as exc:  # what a user would see as a traceback
            pytest.fail(f"{command} {argument} ({what}): {type(exc).__name__}: {exc}")
        finally:
            if what == "unreadable":
                path.chmod(0o700)
        err = capsys.readouterr().err
        lines = [line for line in err.splitlines() if line.strip()]
        assert code == BAD_INPUT, f"{command} {argument} ({what}) exited {code}: {err}"
        assert "Traceback" not in err
        assert len(lines) == 1 and str(path) in lines[0], f"{command} {argument} ({what}): {err}"


def test_out_naming_an_existing_file_is_one_line_without_a_traceback(good, tmp_path) -> None:
    """The report's ``--out`` naming a file, as a user types it (a real process)."""
    taken = tmp_path / "report.html"
    taken.write_text("<p>an earlier page</p>\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(project_root() / "lib")}
    env.pop("OPENAI_BASE_URL", None)
    argv = ["report", "--dataset", f"ratings:{good['dataset']}", "--rubric", str(RUBRIC),
            "--answers", str(good["answers"]), "--out", str(taken)]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "judgepanel.cli", *argv],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300,
    )  # fmt: skip
    assert done.returncode == BAD_INPUT
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and str(taken) in lines[0] and "folder" in lines[0], done.stderr
