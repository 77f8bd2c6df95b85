"""Bad input at the command line: one clear line naming the file, no traceback; and a dry
run on VAB that leaves no trace on disk (its set images are sent from memory)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from judgepanel.cli import EXIT_ERROR, EXIT_OK, main
from judgepanel.core.config import ScoringDesign
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
    assert dry_run(monkeypatch, runs) == EXIT_OK
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
    assert dry_run(monkeypatch, write_runs_file(tmp_path, root)) == EXIT_ERROR
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
    assert dry_run(monkeypatch, write_runs_file(tmp_path, root)) == EXIT_ERROR
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
    assert proc.wait(timeout=120) == EXIT_ERROR
    assert "Traceback" not in err and "BrokenPipeError" not in err and "Exception" not in err
