"""One VAB prediction row for the tests that build prediction tables by hand."""

from __future__ import annotations


def vab_row(task, kind, rep, best=None, worst=None, status="ok", judge="f", order=None) -> dict:
    """A comparison answer as the predictions table holds it."""
    return {
        "task_id": task,
        "judge": judge,
        "kind": kind,
        "repetition": rep,
        "order": order,
        "pred_best": best,
        "pred_worst": worst,
        "status": status,
    }
