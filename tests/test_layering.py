"""The package's layering, checked on the source: no cycles, imports point one way.

Rules (DESIGN.md, "The layers, and what each may import"): ``stats``, ``claims`` and
``datasets`` stand alone; ``core`` may use ``stats`` and ``datasets``; the studies use
``core``, ``stats``, ``claims`` and ``datasets``; ``report`` uses ``core``, ``stats``,
``claims`` and the studies, and reads no dataset itself; the
command line (the package ``judgepanel.cli``, a module per command) sits on top and nothing
outside it imports any of its modules. A study (``judgepanel.studies.<X>``)
may import ``judgepanel.studies.common`` but never another study, and ``common`` imports no
study; the ``judgepanel.studies`` package itself imports every study's planner to register
it. Analysis modules read tidy frames and never touch the client, the store or the scoring
(a study's ``plan`` and ``run`` modules, and the shared ``*_plan`` modules, do that for
them); no study's ``run`` module imports the client. Every layer may import
``judgepanel.errors``, the error base, which imports nothing. ``judgepanel`` never imports
the synthetic world, except the command line's ``sim_server`` module forwarding to its two
commands. An import inside a function is allowed only for the optional heavy parts listed
here, and in the command line's modules, whose handlers import the library they run so
that building the parser stays cheap (``tests/test_cli_imports.py``). A name of ``core``
has one import path, and no module answers unknown attributes (``__getattr__``).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

LIB = Path(__file__).resolve().parents[1] / "lib"
PACKAGES = ("judgepanel", "judgepanel_sim")
CLI = "judgepanel.cli"
"""The command line: a package on top of every layer, one module per command."""

ALLOWED_LOCAL = {
    # the synthetic world is optional and heavy: loaded only when its commands run
    (f"{CLI}.sim_server", "judgepanel_sim.cli"),
    ("judgepanel_sim.cli", "judgepanel_sim.world.world"),
    ("judgepanel_sim.cli", "judgepanel_sim.judges.server"),
    ("judgepanel_sim.cli", "judgepanel_sim.pool"),
}

NOT_FOR_ANALYSIS = ("judgepanel.core.client", "judgepanel.core.store", "judgepanel.core.scoring")


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for path in sorted((LIB / pkg).rglob("*.py")):
            parts = list(path.relative_to(LIB).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


MODULES = _modules()

STUDIES = "judgepanel.studies"
COMMON = f"{STUDIES}.common"
STUDY_PACKAGES = sorted(
    {f"{STUDIES}.{m.split('.')[2]}" for m in MODULES if m.startswith(f"{STUDIES}.")} - {COMMON}
)
"""Every study's package (``judgepanel.studies.fusion``...), read off the source tree."""
BELOW_STUDIES = {"judgepanel.core", "judgepanel.stats", "judgepanel.claims", "judgepanel.datasets"}
ERRORS = "judgepanel.errors"
"""The error base: outside the layers, every one of them may import it."""

# layer -> the first-party layers it may import; the first layer a module lies in is its own
LAYERS = {
    "judgepanel.stats": {"judgepanel.stats"},
    "judgepanel.claims": {"judgepanel.claims"},
    "judgepanel.datasets": {"judgepanel.datasets"},
    "judgepanel.core": {"judgepanel.core", "judgepanel.stats", "judgepanel.datasets"},
    COMMON: {*BELOW_STUDIES, COMMON},
    **{study: {*BELOW_STUDIES, COMMON, study} for study in STUDY_PACKAGES},
    # the package itself imports every study's planner to register it
    STUDIES: {*BELOW_STUDIES, STUDIES},
    "judgepanel.report": {
        "judgepanel.claims",
        "judgepanel.core",
        "judgepanel.report",
        "judgepanel.stats",
        "judgepanel.studies",
    },
}


def _resolve(name: str) -> str | None:
    """The first-party module an imported name refers to (a module, or a module's member)."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def _imports(module: str, path: Path) -> list[tuple[str, bool]]:
    """(first-party module imported, imported inside a function) for every import."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    local_nodes = {
        id(n)
        for f in ast.walk(tree)
        if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
        for n in ast.walk(f)
    }
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
                for _ in range(node.level - 1):
                    pkg = pkg.rpartition(".")[0]
                base = f"{pkg}.{base}" if base else pkg
            names = [f"{base}.{a.name}" for a in node.names]
        for name in names:
            target = _resolve(name)
            if target is not None and target != module:
                found.append((target, id(node) in local_nodes))
    return found


GRAPH = {m: _imports(m, p) for m, p in MODULES.items()}


def _within(module: str, package: str) -> bool:
    """Whether ``module`` is ``package`` or lies inside it."""
    return module == package or module.startswith(f"{package}.")


def _layer(module: str) -> str | None:
    return next((layer for layer in LAYERS if _within(module, layer)), None)


def _wrong_imports(module: str, deps: list[tuple[str, bool]]) -> list[str]:
    """The first-party modules ``module`` imports that its layer may not import."""
    allowed = {*LAYERS[_layer(module)], ERRORS}
    return sorted(
        t for t, _ in deps if t.startswith("judgepanel") and not any(_within(t, a) for a in allowed)
    )


def test_the_error_base_imports_nothing_of_the_package():
    assert [t for t, _ in GRAPH[ERRORS] if t.startswith("judgepanel")] == []


def test_the_walk_sees_the_packages():
    assert "judgepanel.core.store" in MODULES and "judgepanel_sim.judges.server" in MODULES
    assert ("judgepanel.core.store", False) in GRAPH["judgepanel.core.client.runner"]


def test_no_import_cycles():
    edges = {m: {t for t, local in deps if not local} for m, deps in GRAPH.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for t in sorted(edges[m]):
            if state.get(t) == 1:
                cycle = [*stack[stack.index(t) :], t]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if t not in state:
                visit(t)
        stack.pop()
        state[m] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m)


def _local_allowed(module: str, target: str) -> bool:
    """Whether ``module`` may import ``target`` inside a function: a listed heavy part, or
    a command's handler importing the library (not the synthetic world, not the command
    line itself)."""
    if (module, target) in ALLOWED_LOCAL:
        return True
    return _within(module, CLI) and target.startswith("judgepanel.") and not _within(target, CLI)


def test_no_first_party_import_inside_a_function():
    local = sorted((m, t) for m, deps in GRAPH.items() for t, is_local in deps if is_local)
    assert [pair for pair in local if not _local_allowed(*pair)] == []


def test_a_command_line_handler_imports_the_library_but_nothing_else_inside_a_function():
    assert _local_allowed(f"{CLI}.score", "judgepanel.core.scoring")
    assert _local_allowed(f"{CLI}.score", STUDIES)
    assert not _local_allowed(f"{CLI}.score", f"{CLI}.common")
    assert not _local_allowed(f"{CLI}.score", "judgepanel_sim.cli")
    assert not _local_allowed("judgepanel.report.execute", "judgepanel.core.scoring")
    assert any(local for m, deps in GRAPH.items() if _within(m, CLI) for _, local in deps)


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _layer(m)))
def test_imports_point_down(module):
    wrong = _wrong_imports(module, GRAPH[module])
    assert wrong == [], f"{module} imports {wrong}"


def test_every_study_is_a_layer_of_its_own():
    assert {f"{STUDIES}.{s}" for s in ("fusion", "vab", "visionq")} <= set(STUDY_PACKAGES)
    assert COMMON in MODULES and COMMON not in STUDY_PACKAGES
    for study in STUDY_PACKAGES:
        assert _layer(f"{study}.run") == study


def test_a_study_importing_another_study_is_refused(tmp_path):
    # The same walk as the real modules, on a source that breaks the rule in each way.
    source = tmp_path / "fake.py"
    source.write_text(
        "from judgepanel.studies.common.combiners import gb_combiner\n"
        "from judgepanel.studies.fusion.blocks import Blocks\n"
        "import judgepanel.studies.visionq.parse\n"
        "from judgepanel.studies import score_run\n"
        "from judgepanel.core.config import Run\n"
    )
    in_vab = _imports("judgepanel.studies.vab.fake", source)
    assert _wrong_imports("judgepanel.studies.vab.fake", in_vab) == [
        "judgepanel.studies",
        "judgepanel.studies.fusion.blocks",
        "judgepanel.studies.visionq.parse",
    ]
    in_fusion = _imports("judgepanel.studies.fusion.fake", source)
    assert _wrong_imports("judgepanel.studies.fusion.fake", in_fusion) == [
        "judgepanel.studies",
        "judgepanel.studies.visionq.parse",
    ]
    in_common = _imports("judgepanel.studies.common.fake", source)
    assert _wrong_imports("judgepanel.studies.common.fake", in_common) == [
        "judgepanel.studies",
        "judgepanel.studies.fusion.blocks",
        "judgepanel.studies.visionq.parse",
    ]


def test_the_command_line_is_a_package_of_modules():
    assert MODULES[CLI].name == "__init__.py"
    assert {f"{CLI}.score", f"{CLI}.report", f"{CLI}.exit_codes"} <= set(MODULES)
    assert not [m for m in MODULES if m.startswith("judgepanel.cli_")]  # no module beside it


def test_nothing_outside_the_command_line_imports_it():
    users = sorted(
        (m, t)
        for m, deps in GRAPH.items()
        if not _within(m, CLI)
        for t, _ in deps
        if _within(t, CLI)
    )
    assert users == []


def test_an_import_of_any_command_module_is_seen(tmp_path):
    # The walk resolves an import of the package, of a command module and of a name in one.
    source = tmp_path / "fake.py"
    source.write_text(
        "import judgepanel.cli\n"
        "from judgepanel.cli import score\n"
        "from judgepanel.cli.report import report_command\n"
    )
    found = {t for t, _ in _imports("judgepanel.report.fake", source)}
    assert found == {CLI, f"{CLI}.score", f"{CLI}.report"}


def test_the_library_never_imports_the_synthetic_world():
    users = sorted(
        m
        for m, deps in GRAPH.items()
        if m.startswith("judgepanel.") or m == "judgepanel"
        for t, _ in deps
        if t.startswith("judgepanel_sim")
    )
    assert users == [f"{CLI}.sim_server"]


def test_analysis_modules_read_frames_not_the_store_or_the_client():
    analysis = [
        m
        for m, p in MODULES.items()
        if m.startswith("judgepanel.studies.")
        and p.name not in ("__init__.py", "plan.py", "run.py")
        and not p.name.endswith("_plan.py")
    ]
    assert len(analysis) > 15
    offenders = {
        m: sorted(t for t, _ in GRAPH[m] if t.startswith(NOT_FOR_ANALYSIS)) for m in analysis
    }
    assert {m: t for m, t in offenders.items() if t} == {}
    runs = [
        m for m, p in MODULES.items() if m.startswith("judgepanel.studies.") and p.name == "run.py"
    ]
    assert len(runs) == 4
    assert {m: [t for t, _ in GRAPH[m] if t == "judgepanel.core.client"] for m in runs} == {
        m: [] for m in runs
    }


def test_the_public_api_resolves_every_name_it_lists():
    import judgepanel

    for name in judgepanel.__all__:
        assert getattr(judgepanel, name) is not None, name
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        judgepanel.nope  # noqa: B018


@functools.cache
def _declared(module: str) -> tuple[set[str], dict[str, str]]:
    """The names ``module`` declares at its top level, and those it imports (name -> from);
    parsed once per module (every import of it from every source asks)."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    declared: set[str] = set()
    imported: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            declared.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            declared |= {t.id for t in targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported |= {a.asname or a.name: node.module for a in node.names}
    return declared, imported


def test_no_module_answers_unknown_attributes():
    """No module-level ``__getattr__``: every name a module offers is there to be read."""
    found = [m for m in MODULES if m.startswith("judgepanel.") and "__getattr__" in _declared(m)[0]]
    assert found == []


def _sources() -> list[Path]:
    root = LIB.parent
    return [p for d in ("lib", "tests", "bench") for p in sorted((root / d).rglob("*.py"))]


@pytest.mark.slow
def test_a_core_name_has_one_import_path():
    """A name of ``core`` is imported from the module that declares it, or from its own
    package (``judgepanel.core.store`` for ``Store``), never through another module that
    imports it from elsewhere (``ClientOptions`` only from ``judgepanel.core.sendconfig``)."""
    wrong = set()
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or node.module not in MODULES:
                continue
            if not node.module.startswith("judgepanel.core"):
                continue
            declared, imported = _declared(node.module)
            package = MODULES[node.module].name == "__init__.py"
            for alias in node.names:
                origin = imported.get(alias.name)
                if alias.name in declared or f"{node.module}.{alias.name}" in MODULES:
                    continue
                if origin and not (package and origin.startswith(f"{node.module}.")):
                    wrong.add((path.name, node.module, alias.name, origin))
    assert sorted(wrong) == []
