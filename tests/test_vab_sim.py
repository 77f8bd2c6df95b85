"""The simulated judge on VAB prompts, through the real server and the official SDK."""

from __future__ import annotations

import base64

import numpy as np
import pandas as pd
import pytest
from openai import OpenAI

from judgepanel.core.calls import AnswerError
from judgepanel.core.client import run_calls
from judgepanel.core.config import Price
from judgepanel.core.endpoint import Endpoint
from judgepanel.core.sendconfig import ClientOptions
from judgepanel.core.store import Store
from judgepanel.datasets import load_vab
from judgepanel.studies.vab import plan_calls, position_table, predictions_from_store, task_scores
from judgepanel_sim.judges.families import FAMILIES
from judgepanel_sim.judges.handlers import SimRequest
from judgepanel_sim.judges.protocol import ImageView
from judgepanel_sim.judges.vab import VabHandler
from judgepanel_sim.world.vab import write_vab

ALL = {name: fam.model_id for name, fam in FAMILIES.items()}
FREE = {model: Price(0.0, 0.0) for model in ALL.values()}


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("OPENAI_API_KEY", "sim-local")
    return "sim-local"


# The module's fixtures are built once, by the one worker that runs every test here
# (spread over two workers, each built them).
pytestmark = pytest.mark.xdist_group("vab-sim")


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    root = tmp_path_factory.mktemp("synth-vab")
    write_vab(root, seed=3, n_tasks=40)
    return load_vab(root)


def _request(spec, family: str = "aurora", seed: int = 0) -> SimRequest:
    """A SimRequest built from a planned call, as the server would build it."""
    parts: list[tuple[str, object]] = []
    images = []
    for p in spec.build()[0]["content"]:
        if p["type"] == "text":
            parts.append(("text", p["text"]))
        else:
            view = ImageView.from_bytes(base64.b64decode(p["image_url"]["url"].split(",", 1)[1]))
            parts.append(("image", view))
            images.append(view)
    return SimRequest(
        model=ALL[family],
        family=FAMILIES[family],
        system_text="",
        user_text="\n".join(str(v) for k, v in parts if k == "text"),
        parts=parts,
        images=images,
        temperature=0.3,
        seed=seed,
        max_tokens=300,
        rng=np.random.default_rng(seed),
    )


def test_three_image_prompts_get_parseable_answers(sim_server, tasks, api_key):
    three = tasks.loc[tasks.n_images == 3].head(2)
    specs = plan_calls(three, {"aurora": ALL["aurora"], "ember": ALL["ember"]}, balanced=False)
    client = OpenAI(base_url=sim_server.base_url, api_key=api_key)
    kinds = set()
    for spec in specs:
        resp = client.chat.completions.create(
            model=spec.key.model,
            messages=spec.build(),
            temperature=spec.key.temperature,
            seed=spec.seed,
            max_tokens=spec.max_tokens,
        )
        text = resp.choices[0].message.content
        parsed = spec.parse(text)  # raises AnswerError if unreadable
        kinds.add(spec.key.call_type)
        labels = set(three.set_index("task_id").at[spec.key.item, "labels"])
        if spec.key.call_type in ("vab_top1", "vab_tb1"):
            assert parsed["best"] in labels
        if spec.key.call_type in ("vab_bot1", "vab_tb1"):
            assert parsed["worst"] in labels
        if spec.key.call_type == "vab_tb1":
            assert parsed["best"] != parsed["worst"]
        if spec.key.call_type == "vab_top1":
            assert "WORST" not in text.upper()
    assert kinds == {"vab_top1", "vab_bot1", "vab_tb1"}


def test_judges_beat_chance_and_show_their_slot_pull(sim_server, tasks, tmp_path, api_key):
    panel = {f: ALL[f] for f in ("aurora", "basalt", "cobalt", "ember")}
    specs = plan_calls(tasks, panel, questions=("vab_top1",), balanced=False)
    with Store(tmp_path / "vab.sqlite") as store:
        summary = run_calls(
            specs,
            store,
            prices=FREE,
            options=ClientOptions(
                endpoint=Endpoint.at(sim_server.base_url), concurrency=8, progress=False
            ),
        )
        frame = store.frame(dataset="vab")
    assert len(frame) == len(specs) == 40 * 3 * len(panel)
    assert (frame.status == "ok").all(), summary
    pred = predictions_from_store(frame, tasks)
    scores = task_scores(pred, tasks)
    by_family = scores.groupby("judge")[["ap1", "chance_ap1"]].mean()
    chance = by_family["chance_ap1"].iloc[0]
    # The panel as a whole, and its best member by a wider margin, beat chance.
    assert by_family["ap1"].mean() > chance + 0.05
    assert by_family["ap1"].max() > chance + 0.10
    # ember and cobalt are pulled toward the first slot; the pull shows in their picks.
    pos = position_table(pred, tasks, n_resamples=500).set_index(["judge", "slot"])
    for family in ("cobalt", "ember"):
        assert pos.loc[(family, "first"), "delta"] > 0.1
        assert pos.loc[(family, "first"), "ci_low"] > 0


def test_handler_matches_only_labelled_multi_image_comparisons(tasks):
    task = tasks.loc[tasks.n_images == 4].head(1)
    spec = plan_calls(task, {"aurora": ALL["aurora"]}, questions=("vab_tb1",), balanced=False)[0]
    req = _request(spec)
    handler = VabHandler()
    assert handler.matches(req)
    single = SimRequest(**{**req.__dict__, "parts": req.parts[:2], "images": req.images[:1]})
    assert not handler.matches(single)
    unlabelled = [("text", "Which of these is the best?")] + [("image", v) for v in req.images]
    assert not handler.matches(SimRequest(**{**req.__dict__, "parts": unlabelled}))


def test_malformed_answers_mix_unreadable_and_tolerable(tasks):
    task = tasks.loc[tasks.n_images == 3].head(1)
    spec = plan_calls(task, {"aurora": ALL["aurora"]}, questions=("vab_tb1",), balanced=False)[0]
    handler = VabHandler()
    readable, unreadable = 0, set()
    for seed in range(60):
        text = handler.malformed(_request(spec, seed=seed))
        try:
            spec.parse(text)
            readable += 1
            assert "**" in text  # only the markdown variant is readable
        except AnswerError as err:
            msg = str(err)
            unreadable.add(
                "no letter"
                if msg.startswith("no ")
                else "out of range"
                if "out of range" in msg
                else "best = worst"
                if "both best and worst" in msg
                else msg
            )
    assert readable > 0
    assert unreadable == {"no letter", "out of range", "best = worst"}


def test_malformed_server_answers_are_reasked_then_recorded(
    sim_server_factory, tasks, tmp_path, api_key
):
    server = sim_server_factory(malformed_rate=1.0)
    specs = plan_calls(tasks.head(4), {"dune": ALL["dune"]}, balanced=False)
    with Store(tmp_path / "bad.sqlite") as store:
        # every answer garbled: the failure share would stop the run, so it is lifted here
        run_calls(
            specs,
            store,
            prices=FREE,
            options=ClientOptions(
                endpoint=Endpoint.at(server.base_url),
                max_reasks=1,
                max_failure_share=1.0,
                progress=False,
            ),
        )
        frame = store.frame(dataset="vab")
    assert len(frame) == len(specs)
    assert set(frame.loc[frame.status == "failed", "failure"]) == {"final"}
    failed = frame.loc[frame.status == "failed"]
    assert len(failed) > 0 and failed.reason.str.startswith("unparseable").all()
    assert (frame.status == "ok").any()  # markdown variants are read
    pred = predictions_from_store(frame, tasks.head(4))
    scores = task_scores(pred, tasks.head(4))
    assert scores["n_failed"].sum() == len(failed)
    assert (scores["n_orders"] == 3).all()
