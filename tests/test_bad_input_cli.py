"""Bad input at the command line: one clear line naming the file, no traceback, exit code 1;
and a dry run on VAB that leaves no trace on disk (its set images are sent from memory).

Every command that reads a dataset, a rubric or an answers file (``score``, ``agree``,
``data describe``, ``import answers``, ``report``) is given each of them missing and
malformed in turn, the others good (:data:`READERS`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from release_files import write_generic

from judgepanel.cli import main
from judgepanel.cli.exit_codes import BAD_INPUT, CODES, OK, USAGE
from judgepanel.core.config import ScoringDesign
from judgepanel.core.paths import project_root
from judgepanel.core.store import Store
from judgepanel.datasets.vab import image_mime, image_table, load_vab
from judgepanel.studies.common.rubric_plan import plan_images
from judgepanel_sim.world.vab import write_vab

NOWHERE = "http://127.0.0.1:9/v1"
"""Nothing listens on port 9: a request sent by mistake would fail."""


def write_runs_file(tmp: Path, vab_root: Path) -> Path:
    """A runs file with one VAB dataset, its store beside it."""
    runs = {
        "profiles": {
            "t": {
                "description": "test",
                "simulated": True,
                "store": str(tmp / "stores" / "store.sqlite"),
                "datasets": {"vab": {"kind": "vab", "root": str(vab_root)}},
                "families": {"aurora": "sim-aurora-v1"},
                "predeclared": ["aurora"],
                "concurrency": 4,
                "max_cost": 1.0,
            }
        },
        "scoring": {"vab": {"holistic_k": 1, "dimension_r": 1, "temperature": 0.3}},
        "prices": {"sim-aurora-v1": {"input": 0.30, "output": 2.50}},
        "parameters": {"seed": 0},
        "runs": {"t-vab": {"profile": "t", "dataset": "vab", "notebooks": ["05_vab"]}},
    }
    path = tmp / "runs.yaml"
    path.write_text(yaml.safe_dump(runs), encoding="utf-8")
    return path


def dry_run(monkeypatch: pytest.MonkeyPatch, runs: Path) -> int:
    monkeypatch.setenv("OPENAI_BASE_URL", NOWHERE)
    monkeypatch.setenv("OPENAI_API_KEY", "sim-local")
    return main(["score", "--run", "t-vab", "--runs-file", str(runs), "--dry-run"])


def tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every file and folder under ``root``: size and modification time."""
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")}


@pytest.fixture(scope="module")
def vab_world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A few synthetic VAB sets in the released Parquet layout."""
    root = tmp_path_factory.mktemp("vab") / "synth-vab"
    write_vab(root, 5, n_tasks=4)
    return root


def test_a_vab_dry_run_writes_nothing(vab_world, tmp_path, monkeypatch, capsys):
    """It once wrote every set image to an image cache beside the store."""
    runs = write_runs_file(tmp_path, vab_world)
    before = tree(tmp_path) | tree(vab_world.parent)
    assert dry_run(monkeypatch, runs) == OK
    out = capsys.readouterr().out
    assert "calls planned" in out and "nothing was sent" in out
    assert tree(tmp_path) | tree(vab_world.parent) == before


def test_set_images_are_sent_from_memory_as_from_a_file(vab_world, tmp_path):
    """The rubric calls of VAB set images build the request a file of the same bytes
    would, under the same key."""
    images = image_table(load_vab(vab_world))
    design, family = ScoringDesign(1, 1, 0.3), {"aurora": "sim-aurora-v1"}
    for row in images.head(3).itertuples():
        suffix = {"image/png": "png", "image/jpeg": "jpg"}[image_mime(row.data)]
        path = tmp_path / f"{row.label}.{suffix}"
        path.write_bytes(row.data)
        on_disk = pd.DataFrame({"image_id": [row.image_id], "path": [str(path)]})
        in_memory = pd.DataFrame({"image_id": [row.image_id], "data": [row.data]})
        specs = plan_images(in_memory, family, design, dataset="vab")
        expected = plan_images(on_disk, family, design, dataset="vab")
        assert [s.key for s in specs] == [s.key for s in expected]
        assert [s.build() for s in specs] == [s.build() for s in expected]


def test_a_damaged_vab_shard_is_one_line_naming_it(vab_world, tmp_path, monkeypatch, capsys):
    root = tmp_path / "vab"
    shard = root / "data" / "test-00000-of-00001.parquet"
    shard.parent.mkdir(parents=True)
    data = bytearray((vab_world / "data" / shard.name).read_bytes())
    chunk = pq.ParquetFile(vab_world / "data" / shard.name).metadata.row_group(0).column(0)
    for i in range(chunk.data_page_offset, chunk.data_page_offset + 8):
        data[i] ^= 0x5A  # the page header of the task ids
    shard.write_bytes(bytes(data))
    assert dry_run(monkeypatch, write_runs_file(tmp_path, root)) == BAD_INPUT
    err = capsys.readouterr().err
    assert err.startswith(f"error: {shard}: rows 0-3 (row group 0), column 'task_id'")
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_an_empty_vab_shard_beside_a_good_one_is_refused(vab_world, tmp_path, monkeypatch, capsys):
    """An empty shard is a truncated download; planning the rest would hide it."""
    root = tmp_path / "vab"
    (root / "data").mkdir(parents=True)
    good = vab_world / "data" / "test-00000-of-00001.parquet"
    (root / "data" / "test-00000-of-00002.parquet").write_bytes(good.read_bytes())
    empty = root / "data" / "test-00001-of-00002.parquet"
    pq.write_table(pa.Table.from_pylist([], schema=pq.read_schema(good)), empty)
    assert dry_run(monkeypatch, write_runs_file(tmp_path, root)) == BAD_INPUT
    captured = capsys.readouterr()
    assert "calls planned" not in captured.out
    assert (
        captured.err.strip()
        == f"error: {empty}: the shard holds no rows (an empty or truncated file?)"
    )


def test_status_into_a_closed_pipe_ends_without_a_traceback(tmp_path):
    """``judgepanel status | head``: the reader leaves before the command has written."""
    store = tmp_path / "store.sqlite"
    with Store(store):
        pass
    proc = subprocess.Popen(
        [sys.executable, "-m", "judgepanel.cli", "status", "--store", str(store)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == BAD_INPUT
    assert "Traceback" not in err and "BrokenPipeError" not in err and "Exception" not in err


READERS: dict[str, list[str]] = {
    "score": ["score", "--dataset", "ratings:{dataset}", "--families", "aurora", "--models",
              "sim-aurora-v1", "--store", "{out}/s.sqlite", "--rubric", "{rubric}", "--dry-run"],
    "agree": ["agree", "--dataset", "ratings:{dataset}", "--answers", "{answers}",
              "--rubric", "{rubric}"],
    "data describe": ["data", "describe", "--dataset", "ratings:{dataset}", "--rubric",
                      "{rubric}"],
    "import answers": ["import", "answers", "{answers}", "--dataset", "ratings:{dataset}",
                       "--rubric", "{rubric}", "--store", "{out}/a.sqlite"],
    "report": ["report", "--dataset", "ratings:{dataset}", "--rubric", "{rubric}",
               "--answers", "{answers}", "--out", "{out}/r"],
}  # fmt: skip
"""Each command that reads a dataset, a rubric or an answers file, with a slot for each."""

READ_CASES = [
    (command, slot, state)
    for command, argv in READERS.items()
    for slot in ("dataset", "rubric", "answers")
    if any(f"{{{slot}}}" in a for a in argv)
    for state in ("missing", "malformed")
]


def _good_files(root: Path) -> dict[str, Path]:
    """A ratings dataset, the project's rubric and answers to the dataset's images."""
    dataset = write_generic(root / "photos")
    answers = root / "answers.csv"
    rows = [(f"img{i:02d}", "lens", "holistic", 1 + i) for i in range(8)]
    pd.DataFrame(rows, columns=["image_id", "judge", "dimension", "score"]).to_csv(
        answers, index=False
    )
    return {"dataset": dataset, "rubric": project_root() / "rubric", "answers": answers}


def _bad_file(root: Path, slot: str, state: str) -> tuple[Path, Path]:
    """(the value given for ``slot``, the file the error must name): missing, or malformed
    (a rating that is not a number, a rubric without dimensions, answers without their
    ``dimension`` column)."""
    if state == "missing":
        gone = root / "nowhere" / {"dataset": "photos", "rubric": "rubric.yaml"}.get(slot, "a.csv")
        return gone, gone
    if slot == "dataset":
        folder = write_generic(root / "bad-photos")
        ratings = (folder / "ratings.csv").read_text(encoding="utf-8").splitlines()
        ratings[3] = ratings[3].replace(ratings[3].split(",")[2], "high", 1)
        (folder / "ratings.csv").write_text("\n".join(ratings) + "\n", encoding="utf-8")
        return folder, folder / "ratings.csv"
    if slot == "rubric":
        rubric = root / "bad-rubric.yaml"
        rubric.write_text("name: broken\ndimensions: {}\n", encoding="utf-8")
        return rubric, rubric
    answers = root / "bad-answers.csv"
    answers.write_text("image_id,judge,score\nimg00,lens,7\n", encoding="utf-8")
    return answers, answers


@pytest.mark.parametrize(("command", "slot", "state"), READ_CASES)
def test_a_missing_or_malformed_input_file_is_one_line_naming_it(
    tmp_path, capsys, monkeypatch, command, slot, state
):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)  # nothing may be sent
    values = {k: str(v) for k, v in _good_files(tmp_path).items()}
    given, named = _bad_file(tmp_path, slot, state)
    values |= {slot: str(given), "out": str(tmp_path / "out")}
    code = main([arg.format(**values) for arg in READERS[command]])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == BAD_INPUT, f"{command} with a {state} {slot} exited {code}: {err}"
    assert "Traceback" not in err and len(lines) == 1, err
    assert lines[0].startswith("error: ") and str(named) in lines[0], err


def test_each_exit_code_means_one_thing_and_the_readme_names_it(capsys):
    assert len(set(CODES.values())) == len(CODES)
    with pytest.raises(SystemExit) as refused:  # argparse's own refusal keeps its code
        main(["score", "--no-such-flag"])
    assert refused.value.code == USAGE
    assert "unrecognized arguments: --no-such-flag" in capsys.readouterr().err
    readme = (project_root() / "README.md").read_text(encoding="utf-8")
    said = " ".join(readme[readme.index("Exit codes, the same for every command") :].split()[:60])
    assert [f"; {code} " in said or f": {code} " in said for code in CODES.values()] == [
        True
    ] * len(CODES)
