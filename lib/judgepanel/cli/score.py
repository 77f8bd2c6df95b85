"""``judgepanel score``: plan the calls of a run (or of explicit flags), skip those already
in the store, and send the rest.

Exit codes (:mod:`judgepanel.cli.exit_codes`): ``OK`` done (calls may have failed; they
are recorded), ``BAD_INPUT`` bad input or configuration, ``BUDGET`` stopped by the budget,
``ABORTED`` stopped early: by an error every call would meet (a rejected API key, an
unknown model), an unreachable endpoint, or more failed calls than
``--max-failure-share``. A stopped run ends with the command to resume.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from judgepanel.cli.common import (
    SubParsers,
    add_missing_images_flag,
    add_option_flags,
    fail,
    option_flags,
    print_plan_table,
    resume_command,
    skipped_line,
    split,
    summary_code,
)
from judgepanel.cli.exit_codes import OK
from judgepanel.core.errors import ConfigError

if TYPE_CHECKING:
    from judgepanel.core.settings import ScoreRequest, ScoreSettings


def add_parser(sub: SubParsers) -> None:
    """``score`` and its flags, the send options' among them."""
    p = sub.add_parser(
        "score",
        help="send planned judge calls and checkpoint every answer",
        description=(
            "Plan the calls of a run (or of explicit flags), skip those already in the store, "
            "and send the rest. The endpoint comes from OPENAI_BASE_URL (or --base-url) and "
            "the key from OPENAI_API_KEY."
        ),
    )
    p.add_argument("--run", help="a run from papermill_runs.yaml (for example demo-eva)")
    p.add_argument("--runs-file", type=Path, help="the runs file (default: papermill_runs.yaml)")
    p.add_argument("--dataset", help="KIND:PATH, for example eva:data/eva or para:data/para")
    p.add_argument("--families", help="comma-separated family names of the profile")
    p.add_argument("--models", help="comma-separated model ids, matching --families one to one")
    p.add_argument("--holistic-k", type=int, help="holistic repetitions per image and family")
    p.add_argument("--dimension-r", type=int, help="repetitions per rubric dimension")
    p.add_argument("--temperature", type=float, help="sampling temperature")
    p.add_argument("--limit-images", type=int, help="score only the first N images of the plan")
    p.add_argument("--store", type=Path, help="the SQLite checkpoint store")
    p.add_argument("--rubric", type=Path, help="a rubric YAML file or folder (default: the run's)")
    add_missing_images_flag(p)
    add_option_flags(p, "score")
    p.set_defaults(handler=score_command)


def score_request(args: argparse.Namespace) -> ScoreRequest:
    """The typed request of ``judgepanel score``'s flags."""
    from judgepanel.core.settings import ScoreRequest

    return ScoreRequest(
        run=args.run,
        runs_file=args.runs_file,
        dataset=args.dataset,
        families=split(args.families),
        models=split(args.models),
        holistic_k=args.holistic_k,
        dimension_r=args.dimension_r,
        temperature=args.temperature,
        limit_images=args.limit_images,
        store=args.store,
        options=option_flags(args),
        rubric=args.rubric,
        missing_images=getattr(args, "missing_images", None),
    )


def _print_dry_run(settings: ScoreSettings) -> None:
    """Per dataset the plan and its cost, then the ceilings; nothing is sent."""
    from judgepanel.core.scoring import dry_run

    for target, n_planned, table in dry_run(settings):
        print(f"{target.name} ({target.kind}, {target.root}): {n_planned} calls planned")
        print_plan_table(table)
    send = settings.send
    ceiling = "none" if send.max_cost is None else f"${send.max_cost:.2f}"
    total = "none" if send.max_total_cost is None else f"${send.max_total_cost:.2f}"
    print(
        f"ceiling (--max-cost): {ceiling}; store ceiling (--max-total-cost): {total}; "
        "nothing was sent (dry run)"
    )


def score_command(args: argparse.Namespace) -> int:
    """``judgepanel score``: plan, skip what is stored, send the rest; see the exit codes."""
    import judgepanel.studies  # noqa: F401  (registers each study's planner)
    from judgepanel.core.client import ClientError, scrub
    from judgepanel.core.frames import skipped_images
    from judgepanel.core.scoring import closing_note, score_settings
    from judgepanel.core.settings import resolve_settings
    from judgepanel.core.store import StoreError

    try:
        settings = resolve_settings(score_request(args))
        for target in settings.targets:
            skipped = skipped_images(target)
            if skipped:
                print(skipped_line(target.name, skipped), flush=True)
        if args.dry_run:
            _print_dry_run(settings)
            return OK
        base_url = settings.send.endpoint.base_url
        print(f"endpoint: {base_url or '(SDK default)'}; store: {settings.store}", flush=True)
        summary = score_settings(settings)
    except (ConfigError, ClientError, StoreError, FileNotFoundError, ValueError) as exc:
        return fail(exc)
    send = settings.send
    ceilings = {"--max-cost": send.max_cost, "--max-total-cost": send.max_total_cost}
    note = closing_note(summary, resume_command(args), ceilings)
    if note:
        stopped = summary.aborted or summary.stopped_by_budget
        print(scrub(note), file=sys.stderr if stopped else sys.stdout, flush=True)
    return summary_code(summary)
