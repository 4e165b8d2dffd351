"""Rules checked on the source: the engine knows nothing of GitHub, LiteLLM is imported in one
module and only lazily, PyGithub in one module of the action, one run flows one way (runner →
scoring → probes; evaluation reads and writes nothing), and no function is longer than 60 lines
unless a ``# long:`` comment says why.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "promptcanary"
ACTION = ROOT / "promptcanary_action"
LITELLM_MODULE = ENGINE / "providers" / "litellm.py"
PYGITHUB_MODULE = ACTION / "github" / "client.py"
PYGITHUB_DOTTED = "promptcanary_action.github.client"
GITHUB_PACKAGES = {"github", "github3", "ghapi", "promptcanary_action"}
_DYNAMIC_IMPORTERS = {"import_module", "__import__"}


@dataclass(frozen=True)
class Import:
    module: str
    line: int
    in_function: bool
    type_checking_only: bool

    @property
    def top(self) -> str:
        return self.module.split(".")[0]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(source: str) -> list[Import]:
    """Every absolute import in ``source``, including ``importlib.import_module("literal")``."""
    found: list[Import] = []

    def visit(node: ast.AST, in_function: bool, type_checking: bool) -> None:
        modules: list[str] = []
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            first = node.args[0] if node.args else None
            literal = first.value if isinstance(first, ast.Constant) else None
            if name in _DYNAMIC_IMPORTERS and isinstance(literal, str):
                modules = [literal]
        line = getattr(node, "lineno", 0)
        found.extend(Import(m, line, in_function, type_checking) for m in modules)
        inner_function = in_function or isinstance(
            node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
        )
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, inner_function, True)
            for child in node.orelse:
                visit(child, inner_function, type_checking)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, inner_function, type_checking)

    visit(ast.parse(source), False, False)
    return found


def python_files(package: Path) -> list[Path]:
    return sorted(p for p in package.rglob("*.py") if "__pycache__" not in p.parts)


def _where(path: Path, imp: Import) -> str:
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    return f"{shown}:{imp.line} imports {imp.module}"


def _imports_of_package(top: str, paths: list[Path], *, home: Path | None = None) -> list[str]:
    """Where a module of ``paths`` other than ``home`` imports the package ``top``."""
    return [
        _where(path, imp)
        for path in paths
        if path != home
        for imp in imports_of(path.read_text())
        if imp.top == top
    ]


# ── the checker itself (so the rules below cannot pass vacuously) ────────────


def test_checker_sees_every_kind_of_import() -> None:
    source = (
        "import os\n"
        "from typing import TYPE_CHECKING\n"
        "import litellm.utils\n"
        "if TYPE_CHECKING:\n"
        "    from github import Github\n"
        "def f():\n"
        "    import litellm\n"
        "    return importlib.import_module('promptcanary_action.main')\n"
        "from . import sibling\n"
    )
    found = {(i.module, i.in_function, i.type_checking_only) for i in imports_of(source)}
    assert found == {
        ("os", False, False),
        ("typing", False, False),
        ("litellm.utils", False, False),
        ("github", False, True),
        ("litellm", True, False),
        ("promptcanary_action.main", True, False),
    }


def test_the_rules_see_the_packages() -> None:
    engine_files = python_files(ENGINE)
    assert ENGINE / "core" / "models.py" in engine_files
    assert LITELLM_MODULE in engine_files


# ── the rules ────────────────────────────────────────────────────────────────


def test_engine_imports_nothing_github_related() -> None:
    offenders = [
        _where(path, imp)
        for path in python_files(ENGINE)
        for imp in imports_of(path.read_text())
        if imp.top in GITHUB_PACKAGES
    ]
    assert offenders == [], "the engine must not know about GitHub:\n" + "\n".join(offenders)


def test_litellm_only_in_its_provider_module() -> None:
    paths = python_files(ENGINE) + python_files(ACTION)
    offenders = _imports_of_package("litellm", paths, home=LITELLM_MODULE)
    assert offenders == [], "import LiteLLM through promptcanary.providers.litellm:\n" + "\n".join(
        offenders
    )


def test_litellm_is_imported_lazily() -> None:
    # A module-level import would cost seconds on every `import promptcanary`; TYPE_CHECKING
    # blocks never run, so they are allowed.
    litellm_imports = [i for i in imports_of(LITELLM_MODULE.read_text()) if i.top == "litellm"]
    assert litellm_imports, "the LiteLLM provider does not import litellm at all"
    eager = [
        _where(LITELLM_MODULE, i)
        for i in litellm_imports
        if not i.in_function and not i.type_checking_only
    ]
    assert eager == [], "litellm must be imported inside functions only:\n" + "\n".join(eager)


def test_pygithub_only_in_the_action_github_module() -> None:
    offenders = _imports_of_package("github", python_files(ACTION), home=PYGITHUB_MODULE)
    assert offenders == [], "use promptcanary_action.github for GitHub calls:\n" + "\n".join(
        offenders
    )


def test_importing_the_engine_does_not_load_litellm() -> None:
    code = (
        "import sys\n"
        "import promptcanary, promptcanary.core.suite, promptcanary.core.probes\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('litellm', 'github'))\n"
        "print(','.join(loaded))\n"
    )
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "", f"imported eagerly: {done.stdout.strip()}"


# ── one-way flow inside the engine ───────────────────────────────────────────

CORE = ENGINE / "core"


def runtime_imports(path: Path) -> set[str]:
    """Modules ``path`` imports when it runs (TYPE_CHECKING-only imports excluded)."""
    return {i.module for i in imports_of(path.read_text()) if not i.type_checking_only}


def _offenders(paths: list[Path], forbidden: tuple[str, ...]) -> list[str]:
    return [
        f"{path.relative_to(ROOT)} imports {module}"
        for path in paths
        for module in sorted(runtime_imports(path))
        if any(module == f or module.startswith(f + ".") for f in forbidden)
    ]


RUN = CORE / "run"
SAMPLING = CORE / "sampling"
VERDICT = CORE / "verdict"
ADAPTERS = ("promptcanary.providers", "promptcanary.storage", "promptcanary.cli")


def test_scoring_never_calls_back_into_the_runner_or_the_evaluation() -> None:
    forbidden = (
        "promptcanary.core.run.runner",
        "promptcanary.core.run.session",
        "promptcanary.core.verdict",
        *ADAPTERS,
    )
    assert _offenders([RUN / "scoring.py"], forbidden) == []


def test_probes_know_nothing_of_suites_runs_or_scoring() -> None:
    forbidden = (
        "promptcanary.core.suite",
        "promptcanary.core.spec",
        "promptcanary.core.run",
        "promptcanary.core.verdict",
    )
    assert _offenders(python_files(CORE / "probes"), forbidden) == []


def test_the_evaluation_does_no_io() -> None:
    # Loading the baseline and saving a promoted run belong to the CLI and the action.
    forbidden = (
        "promptcanary.core.run.runner",
        "promptcanary.core.run.session",
        "promptcanary.core.run.provider",
        "promptcanary.core.run.recording",
        "promptcanary.core.files",
        *ADAPTERS,
    )
    assert _offenders(python_files(VERDICT), forbidden) == []


def test_sampling_is_pure() -> None:
    # The statistics of samples: auto read counts and write decisions; the runner calls them.
    forbidden = (
        "promptcanary.core.run",
        "promptcanary.core.verdict",
        "promptcanary.core.render",
        "promptcanary.core.files",
        *ADAPTERS,
    )
    assert _offenders(python_files(SAMPLING), forbidden) == []


def test_the_flow_rules_see_real_imports() -> None:
    # So the rules above cannot pass because the checker sees nothing.
    assert "promptcanary.core.run.scoring" in runtime_imports(RUN / "runner.py")
    assert "promptcanary.core.comparator" in runtime_imports(VERDICT / "evaluate.py")
    assert "promptcanary.core.sampling.sequential" in runtime_imports(SAMPLING / "sequencer.py")
    assert "promptcanary.core.probes.base" in runtime_imports(CORE / "spec.py")


# ── function length ──────────────────────────────────────────────────────────

MAX_FUNCTION_LINES = 60
LONG_MARK = "# long:"
SCRIPTS = ROOT / "scripts"


@dataclass(frozen=True)
class Function:
    name: str
    """Qualified within its module: ``Class.method``, ``outer.inner``."""
    line: int
    length: int
    """Lines from the ``def`` to the function's last line, docstring included."""
    explained: bool
    """A ``# long: <why>`` comment stands right above the ``def`` (or its first decorator), or on
    the first line of its body."""


def _is_long_mark(line: str) -> bool:
    text = line.strip()
    return text.startswith(LONG_MARK) and text.removeprefix(LONG_MARK).strip() != ""


def _explained(node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> bool:
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    # The first line of the body: the topmost comment line right above the first statement.
    body = node.body[0].lineno
    while body - 1 > node.lineno and lines[body - 2].strip().startswith("#"):
        body -= 1
    return any(_is_long_mark(lines[n - 1]) for n in (first - 1, body) if 1 <= n <= len(lines))


def functions_of(source: str) -> list[Function]:
    """Every function and method of ``source``, nested ones included."""
    lines = source.splitlines()
    found: list[Function] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = prefix + child.name
                length = (child.end_lineno or child.lineno) - child.lineno + 1
                found.append(Function(name, child.lineno, length, _explained(child, lines)))
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return found


def too_long(source: str) -> list[Function]:
    """The functions of ``source`` over the limit that no ``# long:`` comment explains."""
    return [f for f in functions_of(source) if f.length > MAX_FUNCTION_LINES and not f.explained]


def _def(
    name: str,
    statements: int,
    *,
    indent: str = "",
    keyword: str = "def",
    above: tuple[str, ...] = (),
    first: tuple[str, ...] = (),
) -> str:
    """Source of a function: ``above`` lines, the ``def`` line, ``first`` lines, then
    ``statements`` one-line statements."""
    inner = indent + "    "
    body = [*first, *(f"x{i} = {i}" for i in range(statements))]
    return (
        "".join(f"{indent}{line}\n" for line in above)
        + f"{indent}{keyword} {name}():\n"
        + "".join(f"{inner}{line}\n" for line in body)
    )


def test_the_length_rule_catches_a_long_function() -> None:
    why = "# long: one table of cases reads best in one place"
    source = "".join(
        [
            "import functools\n",
            _def("fits", 59),
            _def("one_over", 60),
            _def("docstring_counts", 59, keyword="async def", first=('"""Doc."""',)),
            "class C:\n" + _def("method", 60, indent="    "),
            "def outer():\n" + _def("inner", 70, indent="    ") + "    return inner\n",
            _def("explained_above", 70, above=(why,)),
            _def("explained_above_decorator", 70, above=(why, "@functools.cache")),
            _def("explained_in_body", 70, first=(why,)),
            _def("explained_before_docstring", 70, first=(why, '"""Doc."""')),
            _def("mark_without_reason", 70, above=("# long:",)),
            _def("mark_too_far_above", 70, above=(why, "")),
            _def("mark_too_late", 70, first=("y = 0", why)),
        ]
    )
    lengths = {f.name: f.length for f in functions_of(source)}
    assert (lengths["fits"], lengths["one_over"], lengths["docstring_counts"]) == (60, 61, 61)
    assert {f.name for f in too_long(source)} == {
        "one_over",
        "docstring_counts",
        "C.method",
        "outer",
        "outer.inner",
        "mark_without_reason",
        "mark_too_far_above",
        "mark_too_late",
    }


def test_the_length_rule_sees_the_packages() -> None:
    # So the rule below cannot pass because it reads nothing.
    names = {f.name for f in functions_of((ACTION / "activity.py").read_text())}
    assert {"decide", "_baseline_ref"} <= names
    assert SCRIPTS / "demo.py" in python_files(SCRIPTS)


def test_no_function_over_60_lines_without_a_reason() -> None:
    offenders = [
        f"{path.relative_to(ROOT).as_posix()}:{f.line} {f.name} is {f.length} lines"
        for package in (ENGINE, ACTION, SCRIPTS)
        for path in python_files(package)
        for f in too_long(path.read_text())
    ]
    assert offenders == [], (
        f"functions over {MAX_FUNCTION_LINES} lines: split them, or say why not in a"
        f" '{LONG_MARK} <why>' comment right above the def or on the first line of its body:\n"
        + "\n".join(offenders)
    )


# ── import cycles and layers ─────────────────────────────────────────────────


def module_names(root: Path, packages: tuple[str, ...]) -> dict[str, Path]:
    """Dotted module name → file, for every module of ``packages`` under ``root``."""
    found: dict[str, Path] = {}
    for package in packages:
        for path in python_files(root / package):
            parts = path.relative_to(root).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _owner(name: str, modules: dict[str, Path]) -> str | None:
    """The module of ``modules`` that ``name`` (a module or ``module.attribute``) lives in."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def import_graph(root: Path, packages: tuple[str, ...]) -> dict[str, set[str]]:
    """Module → the modules of ``packages`` it imports: at the top, in functions (deferred) and
    under ``TYPE_CHECKING`` alike. ``from pkg import sub`` imports the module ``pkg.sub``."""
    modules = module_names(root, packages)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                subs = [f"{node.module}.{a.name}" for a in node.names]
                targets.update(s for s in subs if s in modules)
                if not all(s in modules for s in subs):
                    targets.add(node.module)
        owners = {_owner(t, modules) for t in targets}
        graph[name] = {o for o in owners if o is not None and o != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _write_package(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_cycle_rule_finds_deferred_and_type_checking_cycles(tmp_path: Path) -> None:
    _write_package(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "def f():\n    from pkg.b import g\n",
            "pkg/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import a\n",
            "pkg/c.py": "import pkg.d\n",
            "pkg/d.py": "import os\nfrom pkg import sub\n",
            "pkg/sub/__init__.py": "from pkg.sub.leaf import x\n",
            "pkg/sub/leaf.py": "x = 1\n",
        },
    )
    graph = import_graph(tmp_path, ("pkg",))
    assert graph["pkg.a"] == {"pkg.b"} and graph["pkg.b"] == {"pkg.a"}
    assert graph["pkg.d"] == {"pkg.sub"}
    # A package importing its own module and that module being imported from the package
    # (``from pkg.sub.leaf import x``) is no cycle; a.py and b.py are one.
    assert cycles(graph) == [["pkg.a", "pkg.b"]]


def test_no_import_cycle_in_the_engine() -> None:
    graph = import_graph(ROOT, ("promptcanary",))
    assert "promptcanary.core.run.runner" in graph  # the rule reads the real modules
    assert cycles(graph) == [], "import cycles (deferred and TYPE_CHECKING imports count)"


def test_no_import_cycle_in_the_action() -> None:
    graph = import_graph(ROOT, ("promptcanary_action",))
    assert "promptcanary_action.main" in graph
    assert cycles(graph) == [], "import cycles (deferred and TYPE_CHECKING imports count)"


def _every_import(paths: list[Path], forbidden: tuple[str, ...]) -> list[str]:
    """Where ``paths`` import a module of ``forbidden``, at any depth, TYPE_CHECKING included."""
    return [
        _where(path, imp)
        for path in paths
        for imp in imports_of(path.read_text())
        if any(imp.module == f or imp.module.startswith(f + ".") for f in forbidden)
    ]


def test_the_core_imports_none_of_its_adapters() -> None:
    core = python_files(CORE)
    assert RUN / "provider.py" in core
    assert _every_import(core, ADAPTERS) == []


def test_the_action_baselines_know_neither_the_settings_nor_the_github_client() -> None:
    baselines = python_files(ACTION / "baselines")
    assert ACTION / "baselines" / "branch.py" in baselines
    forbidden = ("promptcanary_action.settings", PYGITHUB_DOTTED, "github")
    assert _every_import(baselines, forbidden) == []


def test_the_layer_rules_catch_an_offender(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text("def f():\n    from promptcanary.storage.file import X\n")
    assert _every_import([path], ADAPTERS) == [f"{path}:2 imports promptcanary.storage.file"]
