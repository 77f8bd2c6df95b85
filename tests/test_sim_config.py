"""The simulated server's options are declared once, in ``SimConfig``: its command line is
made from the fields, and the launcher hands a config to the server unchanged."""

from __future__ import annotations

import argparse
from dataclasses import fields
from pathlib import Path

import pytest

from judgepanel.core.local_sim import SimConfig, serve_command_line
from judgepanel_sim.cli import build_parser

EVERY_OPTION_SET = SimConfig(
    seed=7,
    latency_ms=12.5,
    error_rate=0.125,
    malformed_rate=0.3,
    timeout_rate=0.05,
    stall_seconds=30.0,
    retry_after_s=0.25,
    max_body_bytes=1024,
    echo_key=True,
    ledger=Path("/tmp/ledger.jsonl"),
    rpm=60,
    tpm=6000,
    burst_s=0.1 + 0.2,  # a float that prints with all its digits
    count_refused=False,
    cache_window=4,
    report_cost=True,
    prices=Path("prices.yaml"),
    batch_delay_s=1.5,
    batch_fail_share=0.2,
    batch_expire_after=10,
    batch_invalid=True,
    batch_workers=2,
)


def serve_parser() -> argparse.ArgumentParser:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices["serve"]


def test_every_option_has_a_flag() -> None:
    flags = {a.dest: a.option_strings for a in serve_parser()._actions}
    for f in fields(SimConfig):
        assert flags.get(f.name) == [SimConfig.flag(f.name)], f.name
        assert f.metadata["help"], f.name


def test_every_option_is_set_above() -> None:
    for f in fields(SimConfig):
        assert getattr(EVERY_OPTION_SET, f.name) != f.default, f.name


def test_the_launcher_passes_a_config_through_unchanged(tmp_path: Path) -> None:
    for config in (SimConfig(), EVERY_OPTION_SET, SimConfig(count_refused=False, seed=3)):
        command = serve_command_line(config, 0, tmp_path / "port")
        assert command[1:4] == ["-m", "judgepanel_sim", "serve"]
        args = build_parser().parse_args(command[3:])
        assert (args.port, args.port_file) == (0, tmp_path / "port")
        assert SimConfig.from_args(args) == config


def test_the_flags_in_use_keep_their_names() -> None:
    """Flags the Makefile, the README, the benchmarks and the tests pass."""
    in_use = """serve --port 0 --batch-delay 0.5 --burst-seconds 3 --no-count-refused
        --latency-ms 5 --error-rate 0.1 --seed 2 --batch-fail-share 0.1 --batch-expire-after 3
        --batch-invalid --rpm 6 --tpm 60 --cache-window 2 --report-cost --ledger l.jsonl
        --prices p.yaml --echo-key --batch-workers 1 --malformed-rate 0.2 --timeout-rate 0.1"""
    args = build_parser().parse_args(in_use.split())
    config = SimConfig.from_args(args)
    assert (config.batch_delay_s, config.burst_s, config.count_refused) == (0.5, 3.0, False)
    assert config.prices == Path("p.yaml") and config.batch_workers == 1


def test_a_bad_option_is_refused_by_the_config() -> None:
    with pytest.raises(ValueError, match="burst_s must be > 0"):
        SimConfig(burst_s=0)
    with pytest.raises(ValueError, match="batch fail share must lie in"):
        SimConfig(batch_fail_share=2.0)
