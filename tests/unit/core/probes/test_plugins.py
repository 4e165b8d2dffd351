"""Importing custom probe modules: files and dotted modules register probes; failures name file:line."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from textwrap import dedent

import pytest

from promptcanary.core.probes.base import ProbeRegistryError, get_probe_registry
from promptcanary.core.probes.plugins import ProbeModuleError, import_probe_modules


def unique(prefix: str) -> str:
    # Probe ids stay in the process-wide registry: every test claims fresh ones.
    return f"{prefix}_{uuid.uuid4().hex[:10]}"


def probe_source(probe_id: str, class_name: str = "CustomProbe") -> str:
    return dedent(
        f"""
        from promptcanary.core.models import CanaryPrompt, LLMResponse, ProbeResult
        from promptcanary.core.probes.base import BaseProbe, probe


        class {class_name}(BaseProbe):
            probe_id = "{probe_id}"

            def evaluate(self, prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
                return self._make_result(prompt.id, passed=True, score=1.0)


        @probe("{probe_id}_fn")
        def check(prompt: CanaryPrompt, response: LLMResponse) -> ProbeResult:
            return ProbeResult(probe_id="{probe_id}_fn", prompt_id=prompt.id, passed=True, score=1.0)
        """
    )


def write(base: Path, relative: str, text: str) -> Path:
    path = base / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def restore_sys_path() -> Iterator[None]:
    saved_path, saved_modules = list(sys.path), set(sys.modules)
    yield
    sys.path[:] = saved_path
    for name in set(sys.modules) - saved_modules:
        del sys.modules[name]


def test_a_file_registers_its_probes(tmp_path: Path) -> None:
    probe_id = unique("file_probe")
    write(tmp_path, "probes/mine.py", probe_source(probe_id))
    (module,) = import_probe_modules(["probes/mine.py"], base_dir=tmp_path)
    registry = get_probe_registry()
    assert registry[probe_id] is module.CustomProbe
    assert registry[f"{probe_id}_fn"] is module.check


def test_a_dotted_module_is_imported_from_the_working_directory(tmp_path: Path) -> None:
    probe_id = unique("dotted_probe")
    package = unique("pkg")
    write(tmp_path, f"{package}/__init__.py", "")
    write(tmp_path, f"{package}/canary_probes.py", probe_source(probe_id))
    (module,) = import_probe_modules([f"{package}.canary_probes"], base_dir=tmp_path)
    assert module.__name__ == f"{package}.canary_probes"
    assert get_probe_registry()[probe_id] is module.CustomProbe


def test_several_entries_in_order(tmp_path: Path) -> None:
    first, second = unique("first"), unique("second")
    write(tmp_path, "a.py", probe_source(first))
    write(tmp_path, "b.py", probe_source(second))
    modules = import_probe_modules(["a.py", "b.py"], base_dir=tmp_path)
    assert [m.CustomProbe.probe_id for m in modules] == [first, second]


def test_two_files_with_the_same_name_cannot_hide_a_duplicate_probe_id(tmp_path: Path) -> None:
    # team_a/probes.py and team_b/probes.py both claim one id with a same-named class: that is
    # the duplicate the registry reports, not one file silently replacing the other.
    probe_id = unique("dup")
    write(tmp_path, "team_a/probes.py", probe_source(probe_id))
    write(tmp_path, "team_b/probes.py", probe_source(probe_id))
    with pytest.raises(ProbeModuleError) as info:
        import_probe_modules(["team_a/probes.py", "team_b/probes.py"], base_dir=tmp_path)
    message = str(info.value)
    assert "team_b/probes.py" in message
    assert isinstance(info.value.__cause__, ProbeRegistryError)
    assert probe_id in message


def test_a_file_raising_at_import_names_file_line_and_exception(tmp_path: Path) -> None:
    write(
        tmp_path,
        "probes/broken.py",
        "import os\n\nSETTINGS = {}\nTHRESHOLD = SETTINGS['threshold']\n",
    )
    with pytest.raises(ProbeModuleError) as info:
        import_probe_modules(["probes/broken.py"], base_dir=tmp_path)
    message = str(info.value)
    assert message.startswith(f"{tmp_path / 'probes/broken.py'}:4: ")
    assert "KeyError" in message and "threshold" in message


def test_the_line_is_the_users_even_when_the_error_is_raised_deeper(tmp_path: Path) -> None:
    write(tmp_path, "probes/deep.py", "import json\n\nDATA = json.loads('{broken')\n")
    with pytest.raises(ProbeModuleError) as info:
        import_probe_modules(["probes/deep.py"], base_dir=tmp_path)
    assert str(info.value).startswith(f"{tmp_path / 'probes/deep.py'}:3: ")
    assert "JSONDecodeError" in str(info.value)


def test_a_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    write(tmp_path, "probes/typo.py", "x = 1\n\ndef broken(:\n    pass\n")
    with pytest.raises(ProbeModuleError) as info:
        import_probe_modules(["probes/typo.py"], base_dir=tmp_path)
    message = str(info.value)
    assert message.startswith(f"{tmp_path / 'probes/typo.py'}:3: ")
    assert "SyntaxError" in message


def test_a_missing_file_names_the_input(tmp_path: Path) -> None:
    with pytest.raises(ProbeModuleError) as info:
        import_probe_modules(["probes/nope.py"], base_dir=tmp_path, label="input 'probe-modules'")
    message = str(info.value)
    assert message.startswith("input 'probe-modules': probes/nope.py: no such file")
    assert str(tmp_path) in message


def test_a_missing_module_names_the_input(tmp_path: Path) -> None:
    name = unique("no_such_module")
    with pytest.raises(ProbeModuleError) as info:
        import_probe_modules([name], base_dir=tmp_path, label="--probe-module")
    message = str(info.value)
    assert message.startswith(f"--probe-module {name}: no such module") or message.startswith(
        f"--probe-module: {name}: no such module"
    )
    assert str(tmp_path) in message


def test_a_missing_dependency_of_a_module_is_not_a_missing_module(tmp_path: Path) -> None:
    dependency = unique("not_installed")
    package = unique("pkg")
    write(tmp_path, f"{package}/__init__.py", "")
    write(tmp_path, f"{package}/needs.py", f"import os\nimport {dependency}\n")
    write(tmp_path, "needs.py", f"import os\nimport {dependency}\n")
    for entry, file in (
        (f"{package}.needs", tmp_path / package / "needs.py"),
        ("needs.py", tmp_path / "needs.py"),
    ):
        with pytest.raises(ProbeModuleError) as info:
            import_probe_modules([entry], base_dir=tmp_path)
        message = str(info.value)
        assert message.startswith(f"{file}:2: "), message
        assert f"ModuleNotFoundError: No module named '{dependency}'" in message


def test_a_dotted_module_raising_at_import_names_its_file_and_line(tmp_path: Path) -> None:
    package = unique("pkg")
    write(tmp_path, f"{package}/__init__.py", "")
    write(tmp_path, f"{package}/bad.py", "\n\nraise RuntimeError('no config')\n")
    with pytest.raises(ProbeModuleError) as info:
        import_probe_modules([f"{package}.bad"], base_dir=tmp_path)
    message = str(info.value)
    assert message.startswith(f"{tmp_path / package / 'bad.py'}:3: ")
    assert "RuntimeError: no config" in message


def test_a_module_can_register_into_another_registry(tmp_path: Path) -> None:
    from promptcanary.core.config.schema import suite_from_text
    from promptcanary.core.probes.registry import DEFAULT_REGISTRY, ProbeRegistry

    probe_id = unique("own_registry")
    write(tmp_path, "own.py", probe_source(probe_id))
    own = ProbeRegistry()
    (module,) = import_probe_modules(["own.py"], base_dir=tmp_path, registry=own)
    assert own.names == sorted([probe_id, f"{probe_id}_fn"])
    assert own.get(probe_id) is module.CustomProbe
    assert probe_id not in DEFAULT_REGISTRY
    suite = suite_from_text(
        f"name: s\nprobes: [{{type: {probe_id}}}]\nprompts: [{{id: p, text: t}}]\n",
        registry=own,
    )
    assert isinstance(suite.probes[0], module.CustomProbe)
