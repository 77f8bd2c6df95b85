"""``judgepanel check``'s endpoint checks take the endpoint they are given: its URL and the
variable its key is read from, never another one read behind its back."""

from __future__ import annotations

from pathlib import Path

from judgepanel.core.config import load_config
from judgepanel.core.endpoint import Endpoint
from judgepanel.core.preflight import check_key, check_models


def _profile(tmp_path: Path):
    from test_report import runs_file

    config = load_config(runs_file(tmp_path, tmp_path / "eva"))
    return config.profile(next(iter(config.profiles)))


def test_the_checks_use_the_given_endpoint_and_its_key_variable(
    sim_server, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    endpoint = Endpoint(sim_server.base_url, key_env="GATEWAY_KEY")
    profile = _profile(tmp_path)

    missing = check_key(endpoint)
    assert (missing.ok, missing.what, missing.detail) == (
        False, "GATEWAY_KEY", "GATEWAY_KEY is not set",
    )  # fmt: skip
    assert check_models(profile, endpoint)[0].detail == "cannot list models without GATEWAY_KEY"

    monkeypatch.setenv("GATEWAY_KEY", "gateway-secret-31")
    assert check_key(endpoint).ok
    found = check_models(profile, endpoint)
    assert all(f.ok for f in found), [f.line() for f in found]
    assert found[0].detail.startswith(sim_server.base_url)
    assert {f.what for f in found[1:]} == {f"family {name}" for name in profile.families}
    assert "gateway-secret-31" not in " ".join(f.line() for f in found)


def test_a_simulated_endpoint_needs_no_key(sim_server, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    endpoint = Endpoint.simulator(sim_server.base_url)
    assert check_key(endpoint).ok
    assert all(f.ok for f in check_models(_profile(tmp_path), endpoint))
