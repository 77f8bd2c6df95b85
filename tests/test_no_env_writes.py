"""No module of the library changes the process's environment.

A library call that wrote ``os.environ`` (to hand a server's URL, a key or a folder to code
that runs later) would change it for everything else in the process and for every child it
starts. Values go down as arguments instead, and a child that needs a variable gets it in
the explicit ``env=`` of its own start. Checked on the source of every module under lib/.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

LIB = Path(__file__).resolve().parents[1] / "lib"
MODULES = sorted(LIB.rglob("*.py"))
MUTATORS = {"pop", "popitem", "setdefault", "update", "clear", "__setitem__", "__delitem__"}


def _is_environ(node: ast.AST) -> bool:
    """``os.environ`` (or ``environ`` imported from os)."""
    if isinstance(node, ast.Attribute):
        return node.attr == "environ" and isinstance(node.value, ast.Name) and node.value.id == "os"
    return isinstance(node, ast.Name) and node.id == "environ"


def _targets(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, ast.AugAssign | ast.AnnAssign):
        return [node.target]
    if isinstance(node, ast.Delete):
        return list(node.targets)
    return []


def environment_writes(source: str) -> list[tuple[int, str]]:
    """Each line of ``source`` that changes the environment, and how."""
    found = []
    for node in ast.walk(ast.parse(source)):
        for target in _targets(node):
            if _is_environ(target) or (
                isinstance(target, ast.Subscript) and _is_environ(target.value)
            ):
                found.append((node.lineno, type(node).__name__.lower() + " to os.environ"))
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in MUTATORS and _is_environ(func.value):
            found.append((node.lineno, f"os.environ.{func.attr}()"))
        named = (
            func.attr
            if isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "os"
            else func.id
            if isinstance(func, ast.Name)
            else ""
        )
        if named in ("putenv", "unsetenv"):
            found.append((node.lineno, f"os.{named}()"))
    return found


def test_the_check_finds_every_kind_of_write():
    source = "\n".join(
        [
            "import os",
            "from os import environ, putenv",
            "os.environ['A'] = '1'",
            "os.environ['A'] += '1'",
            "environ['B'] = '2'",
            "del os.environ['A']",
            "os.environ.pop('A', None)",
            "os.environ.setdefault('A', '1')",
            "os.environ.update(A='1')",
            "os.environ.clear()",
            "os.environ.__setitem__('A', '1')",
            "os.environ.__delitem__('A')",
            "os.putenv('A', '1')",
            "os.unsetenv('A')",
            "putenv('A', '1')",
            "os.environ |= {'A': '1'}",
            "x = os.environ.get('A')",  # reading is fine
            "env = {**os.environ, 'A': '1'}",  # a child's own environment is fine
            "env['A'] = '1'",
        ]
    )
    lines = sorted(line for line, _ in environment_writes(source))
    assert lines == list(range(3, 17))


RESTORERS = {"judgepanel/report/fresh_state.py"}
"""Modules that put the environment back, never change it: a warm notebook kernel's state
between two notebooks (the environment the kernel started with)."""


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(LIB)) for p in MODULES])
def test_no_module_writes_the_environment(path: Path):
    if path.relative_to(LIB).as_posix() in RESTORERS:
        pytest.skip("puts back the environment a notebook kernel started with")
    found = environment_writes(path.read_text(encoding="utf-8"))
    assert not found, "\n".join(f"{path.relative_to(LIB)}:{line}: {what}" for line, what in found)
