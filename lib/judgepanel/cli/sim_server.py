"""``judgepanel sim-server`` and ``judgepanel data synth``: the synthetic world's commands,
forwarded to :mod:`judgepanel_sim.cli` before anything is parsed here.

The synthetic world is an optional part with heavy imports (renderer, server); it is
loaded only when one of its commands runs, and this is the one module of ``judgepanel``
that reaches it. ``data describe`` is judgepanel's own (:mod:`judgepanel.cli.data`).
"""

from __future__ import annotations

import argparse

from judgepanel.cli.common import SubParsers

SIM_COMMANDS = {"data": "synth", "sim-server": "serve"}
"""judgepanel's names for the synthetic world's commands -> its own names."""


def add_parser(sub: SubParsers) -> None:
    """The entry ``judgepanel --help`` lists; the command itself is forwarded."""
    p = sub.add_parser("sim-server", help="the simulated judge server (OpenAI protocol)")
    p.set_defaults(handler=sim_server_command)


def forwarded(argv: list[str]) -> bool:
    """Whether ``argv`` is a command of the synthetic world (all of ``data`` but
    ``data describe``, and ``sim-server``)."""
    return bool(argv) and argv[0] in SIM_COMMANDS and argv[:2] != ["data", "describe"]


def forward(argv: list[str]) -> int:
    """Run a command of the synthetic world with its own parser; its exit code."""
    from judgepanel_sim.cli import main as sim_main

    rest = argv[2:] if argv[0] == "data" and argv[1:2] == ["synth"] else argv[1:]
    return sim_main([SIM_COMMANDS[argv[0]], *rest], prog=f"judgepanel {argv[0]}")


def sim_server_command(args: argparse.Namespace) -> int:
    """``judgepanel sim-server``, had it been parsed here: forwarded all the same."""
    return forward(args.argv)
