"""The send options: declared once, and the command line and the runs file follow.

Each option of `judgepanel.core.sendconfig.ClientOptions` declares its flag and its runs-file
keys; the flags of ``score`` and ``predict`` and the send keys of a profile and a run are
generated from those declarations, and the names users and scripts already write stay as
they were. A value's source is kept through the layers (defaults, profile, run, command
line) and ``check --explain`` shows it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
import yaml

from judgepanel.cli import build_parser, main
from judgepanel.core.config import Profile, Run, load_config
from judgepanel.core.endpoint import Endpoint
from judgepanel.core.errors import ConfigError
from judgepanel.core.paths import project_root
from judgepanel.core.sendconfig import (
    COMMAND_LINE,
    ClientOptions,
    declared_options,
    default_of,
    resolve_options,
)
from judgepanel.core.settings import ScoreRequest, resolve_settings

SCORE_FLAGS = {
    "--base-url", "--concurrency", "--max-cost", "--max-total-cost", "--rpm", "--tpm",
    "--samples-per-request", "--batch", "--no-batch", "--batch-poll", "--no-wait",
    "--timeout", "--max-attempts", "--max-reasks", "--retry-failed", "--no-retry-failed",
    "--max-failure-share", "--no-progress",
}  # fmt: skip
"""The send flags of ``score`` as the README, the Makefile and scripts write them (an
option added later adds its own)."""
PREDICT_FLAGS = {
    "--base-url", "--concurrency", "--max-cost", "--batch", "--no-batch", "--batch-poll",
    "--timeout", "--max-attempts", "--max-reasks", "--retry-failed", "--no-retry-failed",
    "--max-failure-share", "--no-progress",
}  # fmt: skip
PROFILE_KEYS = {
    "concurrency", "max_cost", "max_total_cost", "limits", "samples_per_request", "batch",
    "batch_poll",
}  # fmt: skip
RUN_KEYS = {"samples_per_request", "batch"}


def _subparser(command: str) -> argparse.ArgumentParser:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[command]


def _send_flags(command: str) -> dict[str, str]:
    """Flag -> dest of the send options of ``command``'s parser."""
    names = declared_options()
    return {
        flag: action.dest
        for action in _subparser(command)._actions
        for flag in action.option_strings
        if action.dest in names
    }


@pytest.mark.parametrize(
    ("command", "expected"), [("score", SCORE_FLAGS), ("predict", PREDICT_FLAGS)]
)
def test_the_flags_are_the_declared_ones_with_their_names_kept(command, expected):
    flags = _send_flags(command)
    assert expected <= set(flags)  # a new option adds its flag; none of these goes
    for name, (declared, _) in declared_options().items():
        if declared.flag is not None and command in declared.commands:
            assert flags[declared.flag] == name  # each flag sets the option it declares
    defaults = {a.dest: a.default for a in _subparser(command)._actions}
    assert all(defaults[name] is None for name in set(flags.values()))  # unset unless given


def test_the_runs_file_keys_are_the_declared_ones_with_their_defaults_and_bounds():
    profile = {n for n, (d, _) in declared_options().items() if d.profile}
    run = {n for n, (d, _) in declared_options().items() if d.run}
    assert profile >= PROFILE_KEYS and run >= RUN_KEYS
    assert profile <= set(Profile.model_fields) and run <= set(Run.model_fields)
    for name in profile:
        field = Profile.model_fields[name]
        expected = default_of(name)
        got = field.default_factory() if field.default_factory else field.default
        assert got == expected, name
    for name in run:
        assert Run.model_fields[name].default is None  # unset: the profile's applies
    for name in ("concurrency", "samples_per_request"):
        with pytest.raises(ValueError):
            Profile.model_validate({"store": "s", "datasets": {}, "families": {}, name: 0})


def test_an_option_is_checked_wherever_it_comes_from():
    with pytest.raises(ConfigError, match="--concurrency 0: expected at least 1"):
        resolve_options((COMMAND_LINE, {"concurrency": 0}))
    with pytest.raises(ConfigError, match="--max-failure-share 2: expected a share in"):
        ClientOptions(max_failure_share=2)
    with pytest.raises(ConfigError, match="--batch-poll 0: expected a positive number"):
        ClientOptions(batch_poll=0)
    with pytest.raises(ValueError, match="not a field"):
        resolve_options((COMMAND_LINE, {"concurency": 4}))


def _runs_file(tmp_path: Path) -> Path:
    raw = yaml.safe_load((project_root() / "papermill_runs.yaml").read_text())
    profile = raw["profiles"]["demo"]
    profile.update(concurrency=8, samples_per_request=3, max_cost=0, batch_poll=2.5)
    profile.pop("batch", None)
    raw["runs"]["demo-eva"]["batch"] = True
    path = tmp_path / "runs.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


def test_values_are_layered_defaults_profile_run_command_line_with_their_sources(tmp_path):
    path = _runs_file(tmp_path)
    run = load_config(path).run("demo-eva")
    assert run.send.concurrency == 8 and run.send.source("concurrency") == "profile 'demo'"
    assert run.send.batch and run.send.source("batch") == "run 'demo-eva'"
    assert run.profile.send.batch is False  # the run's own value is not its profile's
    assert run.send.max_cost is None  # `max_cost: 0` means no ceiling
    assert run.send.timeout == default_of("timeout") and run.send.source("timeout") == "default"
    args = build_parser().parse_args(
        ["score", "--run", "demo-eva", "--runs-file", str(path), "--samples-per-request", "2",
         "--no-batch", "--base-url", "http://127.0.0.1:9/v1"]
    )  # fmt: skip
    from judgepanel.cli.score import score_request

    send = resolve_settings(score_request(args)).send
    assert (send.samples_per_request, send.batch, send.concurrency) == (2, False, 8)
    assert send.source("samples_per_request") == send.source("batch") == COMMAND_LINE
    assert send.batch_poll == 2.5 and send.source("batch_poll") == "profile 'demo'"
    assert send.endpoint == Endpoint("http://127.0.0.1:9/v1")  # keyed by OPENAI_API_KEY
    # a caller that parsed the runs file hands it over: the same settings
    again = resolve_settings(
        ScoreRequest(run="demo-eva", config=load_config(path), options={"batch": False})
    )
    assert again.send.batch is False and again.send.samples_per_request == 3


def test_check_explain_shows_each_value_and_where_it_came_from(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    path = _runs_file(tmp_path)
    main(["check", "--profile", "demo", "--run", "demo-eva", "--runs-file", str(path), "--explain"])
    out = capsys.readouterr().out
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ")}
    assert lines["concurrency"].split()[1:] == ["8", "profile", "'demo'"]
    assert lines["batch"].split()[1:] == ["True", "run", "'demo-eva'"]
    assert lines["timeout"].split()[1:] == ["60.0", "default"]
    assert lines["endpoint"].endswith("environment")
    assert set(lines) >= set(declared_options())


def test_an_endpoint_holds_no_key_and_travels_as_a_parameter(monkeypatch):
    from judgepanel.core.client import endpoint_key

    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-shown-1234")
    sim = Endpoint.simulator("http://127.0.0.1:9/v1")
    assert "sk-never" not in repr(sim.as_parameter()) and Endpoint.of(sim.as_parameter()) == sim
    assert endpoint_key(sim) != "sk-never-shown-1234"  # a real key never goes to a simulator
    assert endpoint_key(Endpoint("http://x/v1")) == "sk-never-shown-1234"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://from-env/v1")
    assert ClientOptions().endpoint == Endpoint("http://from-env/v1")
    with pytest.raises(ValueError, match="needs key_env"):
        Endpoint("http://x/v1", key_env=None)


def test_the_report_hands_its_context_as_parameters_and_its_pages_hide_what_varies(tmp_path):
    """Endpoint, outputs and shared fits reach a notebook as parameters (never a key), and
    a page shows neither the simulated server's port nor the temporary folder."""
    from judgepanel.report.execute import KernelContext, notebook_parameters, report_replacements
    from judgepanel.report.page import scrub_paths

    config = load_config(_runs_file(tmp_path))
    url, fits = "http://127.0.0.1:40123/v1", tmp_path / "judgepanel-fits-x1"
    context = KernelContext(Endpoint.simulator(url), tmp_path / "outputs", fits)
    params = notebook_parameters(config, config.run("demo-eva"), {}, context)
    assert params["endpoint"] == {"base_url": url, "key_env": None, "provider": "simulator"}
    assert (params["outputs"], params["shared_fits"]) == (str(tmp_path / "outputs"), str(fits))
    assert "sim-local" not in repr(params)
    html = f"endpoint = {{&#39;base_url&#39;: &#39;{url}&#39;}}; shared_fits = &#39;{fits}&#39;"
    shown = scrub_paths(
        html, report_replacements(config, tmp_path / "outputs", hidden=context.hidden())
    )
    assert "40123" not in shown and str(fits) not in shown
    assert "simulated-judge-server" in shown and "shared-fits" in shown
    bare = notebook_parameters(config, config.run("demo-eva"))
    assert (bare["endpoint"], bare["outputs"], bare["shared_fits"]) == (None, None, None)
