"""Planning the rubric calls, and ``judgepanel score/status/export`` end to end against the
real simulated server, on a small dataset written in the real EVA format."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from PIL import Image

from judgepanel.cli.exit_codes import ABORTED, BUDGET
from judgepanel.core.calls import seed_from_key
from judgepanel.core.config import ScoringDesign
from judgepanel.core.parsing import parse_score
from judgepanel.core.prompts import DIMENSIONS, image_data_url
from judgepanel.core.rubric import load_rubric
from judgepanel.datasets.kinds import kind_names
from judgepanel.studies.common.rubric_plan import plan_images

EVA_HEADER = (
    "image_id=user_id=score=difficulty=visual=composition=quality=semantic=vote_time=1=2=3=4"
)


def write_eva(root: Path, n_images: int = 4, n_raters: int = 6, seed: int = 3) -> Path:
    """A tiny dataset in EVA's on-disk format: ``=``-delimited votes with a BOM, JPEGs."""
    rng = np.random.default_rng(seed)
    (root / "data").mkdir(parents=True, exist_ok=True)
    (root / "EVA_together").mkdir(parents=True, exist_ok=True)
    lines = [EVA_HEADER]
    for i in range(n_images):
        image_id = str(1000 + i)
        arr = np.clip(rng.normal(120, 15 + 12 * i, size=(60, 80, 3)), 0, 255).astype(np.uint8)
        Image.fromarray(arr).save(root / "EVA_together" / f"{image_id}.jpg", quality=90)
        for r in range(n_raters):
            s = int(rng.integers(2, 10))
            a = [int(x) for x in rng.integers(1, 5, size=5)]
            ticks = "=".join(str(int(x)) for x in rng.integers(0, 2, size=4))
            attrs = "=".join(str(x) for x in a)
            lines.append(f"{image_id}=u{r}={s}={attrs}=2020-01-01 10:00:00={ticks}")
    (root / "data" / "votes_filtered.csv").write_text(
        "\ufeff" + "\n".join(lines) + "\n", encoding="utf-8"
    )
    return root


def write_runs_file(
    tmp: Path, eva_root: Path, *, max_cost: float = 100.0, max_total_cost: float = 0.0
) -> Path:
    runs = {
        "profiles": {
            "t": {
                "description": "test",
                "simulated": True,
                "store": str(tmp / "store.sqlite"),
                "datasets": {"eva": {"kind": "eva", "root": str(eva_root)}},
                "families": {"aurora": "sim-aurora-v1", "cobalt": "sim-cobalt-v1"},
                "predeclared": ["aurora"],
                "concurrency": 8,
                "max_cost": max_cost,
                "max_total_cost": max_total_cost,
            }
        },
        "scoring": {"eva": {"holistic_k": 2, "dimension_r": 1, "temperature": 0.3, "n_images": 3}},
        "prices": {
            "sim-aurora-v1": {"input": 0.30, "output": 2.50},
            "sim-cobalt-v1": {"input": 0.10, "output": 0.30},
        },
        "parameters": {"seed": 0},
        "runs": {"t-eva": {"profile": "t", "dataset": "eva", "notebooks": ["00_scoring"]}},
    }
    path = tmp / "runs.yaml"
    path.write_text(yaml.safe_dump(runs), encoding="utf-8")
    return path


def jp(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real ``judgepanel`` command line in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "judgepanel.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
    )


def jp_inline(
    monkeypatch: pytest.MonkeyPatch, base_url: str, *args: str, key: str = "sim-local"
) -> int:
    """Run the command line in this process (faster than a subprocess; same code path)."""
    from judgepanel.cli import main

    monkeypatch.setenv("OPENAI_BASE_URL", base_url)
    monkeypatch.setenv("OPENAI_API_KEY", key)
    return main(list(args))


def images_table(tmp: Path, n: int) -> pd.DataFrame:
    root = write_eva(tmp / "eva", n_images=n)
    ids = [str(1000 + i) for i in range(n)]
    return pd.DataFrame(
        {"image_id": ids, "path": [str(root / "EVA_together" / f"{i}.jpg") for i in ids]}
    )


# -- planning -------------------------------------------------------------------------------


def test_plan_counts_keys_and_order(tmp_path: Path) -> None:
    images = images_table(tmp_path, 3)
    families = {"aurora": "sim-aurora-v1", "cobalt": "sim-cobalt-v1"}
    design = ScoringDesign(holistic_k=3, dimension_r=2, temperature=0.3)
    specs = plan_images(images, families, design, dataset="eva")
    assert len(specs) == 3 * 2 * (3 + 5 * 2) == 3 * 2 * design.calls_per_image
    keys = [s.key for s in specs]
    assert len({k.as_tuple() for k in keys}) == len(keys)
    rubric = load_rubric()
    counts = pd.Series([(k.item, k.family) for k in keys]).value_counts()
    assert (counts == design.calls_per_image).all()
    for k in keys:
        assert k.temperature == 0.3 and k.rubric_sha == rubric.sha256
        assert k.prompt_hash == rubric.prompt_hash(k.call_type, k.dimension)
        assert (k.call_type, k.dimension == "") in {("holistic", True), ("dimension", False)}
    dims = {(k.dimension, k.repetition) for k in keys if k.call_type == "dimension"}
    assert dims == {(d, r) for d in DIMENSIONS for r in range(2)}
    # seeds follow the key, so repetitions differ and a rerun asks for the same samples
    assert all(s.seed == seed_from_key(s.key) for s in specs)
    assert len({s.seed for s in specs}) == len(specs)
    # image-major order: each image's calls form one contiguous block
    items = [k.item for k in keys]
    blocks = [items[0]] + [b for a, b in itertools.pairwise(items) if a != b]
    assert blocks == list(images.image_id)
    # messages are built lazily and carry this image; the parser is the score parser
    spec = specs[0]
    msgs = spec.build()
    url = msgs[-1]["content"][-1]["image_url"]["url"]
    assert url == image_data_url(images.path[0])
    assert spec.parse is parse_score and spec.n_images == 1 and spec.text_chars > 100
    dim_spec = next(s for s in specs if s.key.call_type == "dimension")
    assert dim_spec.build()[0]["role"] == "system"


def test_plan_rejects_bad_tables(tmp_path: Path) -> None:
    design = ScoringDesign(1, 1, 0.3)
    with pytest.raises(ValueError, match="path"):
        plan_images(pd.DataFrame({"image_id": ["a"]}), {"f": "m"}, design, dataset="eva")
    dup = pd.DataFrame({"image_id": ["a", "a"], "path": ["x.jpg", "y.jpg"]})
    with pytest.raises(ValueError, match="duplicate image ids"):
        plan_images(dup, {"f": "m"}, design, dataset="eva")


# -- the command line -----------------------------------------------------------------------


def base_env(base_url: str, key: str = "sim-local") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.update(OPENAI_BASE_URL=base_url, OPENAI_API_KEY=key)
    return env


def test_dry_run_sends_nothing(tmp_path: Path, monkeypatch, capsys) -> None:
    runs = write_runs_file(tmp_path, write_eva(tmp_path / "eva"))
    # nothing listens on port 9: a call sent by mistake would fail
    code = jp_inline(
        monkeypatch, "http://127.0.0.1:9/v1", "score", "--run", "t-eva",
        "--runs-file", str(runs), "--dry-run",
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    # 3 sampled images x 2 families x (2 + 5) calls
    assert "42 calls planned" in out
    assert "aurora" in out and "cobalt" in out
    assert "42 to send, 0 already stored" in out
    assert "upper bound" in out and "nothing was sent" in out
    assert not (tmp_path / "store.sqlite").exists()


@pytest.mark.timeout(240)
def test_score_status_export_end_to_end(sim_server, tmp_path: Path, monkeypatch, capsys):
    runs = write_runs_file(tmp_path, write_eva(tmp_path / "eva"))
    env = base_env(sim_server.base_url)
    # the installed command line, in its own process
    res = jp("score", "--run", "t-eva", "--runs-file", str(runs), "--no-progress", env=env)
    assert res.returncode == 0, res.stderr
    assert "planned 42" in res.stdout
    store = tmp_path / "store.sqlite"
    st = jp("status", "--store", str(store), "--json", env=env)
    info = json.loads(st.stdout)
    assert info["calls"] == 42 and info["ok"] + info["failed"] == 42
    assert info["journal_mode"] == "wal"
    assert [r["rubric_sha"] for r in info["rubrics"]] == [load_rubric().sha256]
    families = {c["family"] for c in info["counts"]}
    assert families == {"aurora", "cobalt"}
    # the dry run now sees what is stored, and a rerun sends nothing
    args = ("score", "--run", "t-eva", "--runs-file", str(runs))
    assert jp_inline(monkeypatch, sim_server.base_url, *args, "--dry-run") == 0
    assert "0 to send, 42 already stored" in capsys.readouterr().out
    assert jp_inline(monkeypatch, sim_server.base_url, *args, "--no-progress") == 0
    assert "already stored 42, sent 0" in capsys.readouterr().out
    out = tmp_path / "calls.parquet"
    assert jp_inline(monkeypatch, "", "export", "--store", str(store), "--out", str(out)) == 0
    df = pd.read_parquet(out)
    assert len(df) == 42 and df.loc[df.status == "ok", "value"].between(1, 10).all()


@pytest.mark.timeout(240)
def test_explicit_flags_override_the_run(sim_server, tmp_path: Path, monkeypatch) -> None:
    eva = write_eva(tmp_path / "eva")
    runs = write_runs_file(tmp_path, eva)
    store = tmp_path / "flags.sqlite"
    code = jp_inline(
        monkeypatch, sim_server.base_url, "score",
        "--runs-file", str(runs),
        "--dataset", f"eva:{eva}",
        "--families", "solo",
        "--models", "sim-cobalt-v1",
        "--holistic-k", "1",
        "--dimension-r", "0",
        "--temperature", "0.7",
        "--limit-images", "2",
        "--store", str(store),
        "--concurrency", "2",
        "--no-progress",
    )  # fmt: skip
    assert code == 0
    from judgepanel.core.store import Store

    with Store(store) as s:
        df = s.frame()
    assert len(df) == 2 and set(df.family) == {"solo"} and set(df.temperature) == {0.7}
    assert set(df.model) == {"sim-cobalt-v1"} and set(df.kind) == {"holistic"}


@pytest.mark.timeout(240)
def test_budget_stop_has_its_own_exit_code(sim_server, tmp_path: Path, monkeypatch, capsys):
    # one reservation of a rubric call here is about $0.004 and the whole plan actually
    # costs about $0.005, so a $0.006 ceiling runs a part of the plan and then stops
    runs = write_runs_file(tmp_path, write_eva(tmp_path / "eva"), max_cost=0.006)
    code = jp_inline(
        monkeypatch, sim_server.base_url, "score", "--run", "t-eva", "--runs-file", str(runs),
        "--no-progress",
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == BUDGET
    assert "budget stopped the run" in err
    from judgepanel.core.store import Store

    with Store(tmp_path / "store.sqlite") as s:
        assert 0 < s.count() < 42
        assert s.spend() <= 0.006


@pytest.mark.timeout(240)
def test_the_store_ceiling_holds_across_resumes(sim_server, tmp_path: Path, monkeypatch, capsys):
    """The profile's ``max_total_cost`` bounds everything the store recorded, whatever
    each command's own ``--max-cost``: resuming again and again cannot spend more, and the
    reservations of calls lost in flight count against it too."""
    from judgepanel.core.calls import CallKey
    from judgepanel.core.store import Store

    # one rubric call reserves about $0.004 and costs about $0.0001: a $0.0045 ceiling
    # for the store runs a few calls, then nothing fits any more
    ceiling = 0.0045
    runs = write_runs_file(tmp_path, write_eva(tmp_path / "eva"), max_total_cost=ceiling)
    args = ("score", "--run", "t-eva", "--runs-file", str(runs), "--no-progress")
    store = tmp_path / "store.sqlite"
    counts = []
    for _ in range(3):
        assert jp_inline(monkeypatch, sim_server.base_url, *args, "--max-cost", "1") == BUDGET
        err = capsys.readouterr().err
        assert "the budget stopped the run (--max-cost $1.0000, --max-total-cost $0.0045)" in err
        assert f"resume (with a higher ceiling) with: judgepanel {' '.join(args)}" in err
        with Store(store) as s:
            assert s.total_committed() <= ceiling
            counts.append(s.count())
    assert 0 < counts[0] <= counts[1] <= counts[2] < 42
    # a call lost in flight (its reservation left behind) counts until proven otherwise
    with Store(store) as s:
        lost = CallKey("eva", "lost", "aurora", "sim-aurora-v1", "holistic", "", 0, 0.3, "", "")
        s.reserve(lost, 1.0)
    assert jp_inline(monkeypatch, sim_server.base_url, *args, "--max-total-cost", "1") == 3
    assert "1 calls were in flight when an earlier run was interrupted" in capsys.readouterr().err
    assert jp_inline(monkeypatch, sim_server.base_url, *args, "--max-total-cost", "2") == 0
    with Store(store) as s:
        assert s.count() == 42 and s.possibly_billed().calls == 1


@pytest.mark.timeout(240)
def test_an_outage_stops_with_the_command_to_resume(
    sim_server, tmp_path: Path, monkeypatch, capsys
):
    """An unreachable endpoint: exit 4, what happened and the exact command to resume; the
    same command then sends what the outage left (its failures were retryable)."""
    runs = write_runs_file(tmp_path, write_eva(tmp_path / "eva"))
    args = ("score", "--run", "t-eva", "--runs-file", str(runs), "--no-progress")
    down = jp_inline(monkeypatch, "http://127.0.0.1:9/v1", *args, "--max-attempts", "2")
    err = capsys.readouterr().err
    assert down == ABORTED
    assert "the run stopped early: http://127.0.0.1:9/v1 is unreachable" in err
    assert "connection error after 2 attempts" in err
    assert f"resume with: judgepanel {' '.join(args)} --max-attempts 2" in err
    assert jp_inline(monkeypatch, sim_server.base_url, *args) == 0
    from judgepanel.core.store import Store

    with Store(tmp_path / "store.sqlite") as s:
        df = s.frame()
    assert len(df) == 42 and (df.status == "ok").all()


@pytest.mark.timeout(240)
def test_report_says_the_same_when_scoring_stops(tmp_path: Path, monkeypatch) -> None:
    from judgepanel.core.errors import RunStopped
    from judgepanel.report.execute import ReportRequest, run_report

    runs = write_runs_file(tmp_path, write_eva(tmp_path / "eva"))
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sim-local")
    request = ReportRequest(profile="t", runs_file=runs, outputs=tmp_path / "out", score=True)
    with pytest.raises(RunStopped) as stop:
        run_report(request)
    text = str(stop.value)
    assert "t-eva: the run stopped early: http://127.0.0.1:9/v1 is unreachable" in text
    assert f"resume with: judgepanel score --run t-eva --runs-file {runs}" in text


def test_bad_input_is_a_clear_error(tmp_path: Path, monkeypatch, capsys) -> None:
    url = "http://127.0.0.1:9/v1"
    store = str(tmp_path / "s.sqlite")
    assert jp_inline(monkeypatch, url, "score", "--dataset", "foo:bar", "--store", store) == 1
    assert f"expected one of {', '.join(kind_names())}" in capsys.readouterr().err
    runs = write_runs_file(tmp_path, tmp_path / "missing-eva")
    assert jp_inline(monkeypatch, url, "score", "--run", "t-eva", "--runs-file", str(runs)) == 1
    assert "missing-eva" in capsys.readouterr().err
    assert jp_inline(monkeypatch, url, "score", "--run", "nope", "--runs-file", str(runs)) == 1
    assert "no run 'nope'" in capsys.readouterr().err
    monkeypatch.delenv("OPENAI_API_KEY")
    from judgepanel.cli import main

    eva = write_eva(tmp_path / "eva")
    assert main(["score", "--dataset", f"eva:{eva}", "--families", "a", "--models",
                 "sim-aurora-v1", "--runs-file", str(runs), "--store", store]) == 1  # fmt: skip
    assert "OPENAI_API_KEY is not set" in capsys.readouterr().err


def test_runs_file_errors_name_the_file_and_the_entry(tmp_path: Path) -> None:
    from judgepanel.core.config import load_config
    from judgepanel.core.errors import ConfigError

    path = write_runs_file(tmp_path, tmp_path / "eva")
    runs = yaml.safe_load(path.read_text())
    runs["prices"]["sim-cobalt-v1"] = {"input": 0.1}
    runs["scoring"]["para"] = {"holistic_k": 5, "temperature": 0.3}
    for section, pattern in (
        ("prices", r"\d+: prices\.sim-cobalt-v1: missing key 'output'"),
        ("scoring", r"\d+: scoring\.para: missing key 'dimension_r'"),
    ):
        broken = dict(yaml.safe_load(path.read_text()))
        broken[section] = runs[section]
        bad = tmp_path / f"bad-{section}.yaml"
        bad.write_text(yaml.safe_dump(broken))
        with pytest.raises(ConfigError, match=rf"bad-{section}\.yaml:{pattern}"):
            load_config(bad)


def test_scored_dataset_is_the_designs_sample(tmp_path: Path) -> None:
    from judgepanel.core.frames import scored_dataset

    root = write_eva(tmp_path / "eva", n_images=6)
    every = scored_dataset("eva", root, ScoringDesign(2, 1, 0.3))  # no n_images: all of them
    assert len(every.images) == 6
    some = scored_dataset("eva", root, ScoringDesign(2, 1, 0.3, n_images=4, sample_seed=1))
    assert len(some.images) == 4 and set(some.images.image_id) <= set(every.images.image_id)


def test_each_study_registers_the_planner_of_its_dataset_kinds() -> None:
    import judgepanel.studies
    from judgepanel.core.config import DatasetRef
    from judgepanel.core.errors import ConfigError
    from judgepanel.core.scoring import PLANNERS, plan_target
    from judgepanel.core.settings import ScoreSettings

    assert set(PLANNERS) == set(kind_names()) == set(judgepanel.studies.PLANNED_KINDS)
    settings = ScoreSettings((), {}, Path("s.sqlite"), {})
    with pytest.raises(
        ConfigError, match="no planner for dataset kind 'lsvrc'; registered: aadb, ava, cadb, eva"
    ):
        plan_target(DatasetRef("x", "lsvrc", Path(".")), settings)
