"""``plugin.yaml``: required name, validated keys, unknown keys warn and never fail."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import hermes_core._plugins
from hermes_core._plugins import ManifestError, load_manifest


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "plugin.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_full_manifest_is_read(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "name: Weather_Tools\nversion: 1.2\ndescription: Forecasts\nauthor: Ann\n"
        "kind: backend\nprovides_tools: [forecast]\nprovides_hooks: [hermes_tools]\n"
        "requires_env: [WEATHER_KEY]\nrequires_plugins: [Geo_Coder]\n"
        "requires_hermes: '>=0.1'\nhomepage: https://example.org\nlicense: MIT\n",
    )

    manifest = load_manifest(path)

    assert manifest.name == "weather-tools"
    assert manifest.version == "1.2"
    assert manifest.kind == "backend"
    assert manifest.provides_tools == ("forecast",)
    assert manifest.requires_env == ("WEATHER_KEY",)
    assert manifest.requires_plugins == ("geo-coder",)
    assert manifest.requires_hermes is not None
    assert "0.1.0" in manifest.requires_hermes
    assert manifest.warnings == ()


def test_unknown_keys_warn_and_never_fail(tmp_path: Path) -> None:
    path = write(tmp_path, "name: demo\nflavour: vanilla\n")

    manifest = load_manifest(path)

    assert manifest.name == "demo"
    assert manifest.warnings == (f"{path}: unknown key 'flavour' ignored",)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("version: 1\n", "name: required", id="missing-name"),
        pytest.param("name: demo\nkind: daemon\n", "kind: must be", id="bad-kind"),
        pytest.param(
            "name: demo\nrequires_env: TOKEN\n", "requires_env: must be a list", id="scalar-list"
        ),
        pytest.param("name: demo\nrequires_hermes: soon\n", "requires_hermes", id="bad-specifier"),
        pytest.param("- just\n- a list\n", "must be a mapping", id="not-a-mapping"),
        pytest.param("name: 'bad name!'\n", "not a valid plugin name", id="bad-name"),
    ],
)
def test_invalid_manifest_names_file_and_key(tmp_path: Path, text: str, expected: str) -> None:
    path = write(tmp_path, text)

    with pytest.raises(ManifestError, match=expected) as caught:
        load_manifest(path)

    assert str(path) in str(caught.value)


def test_every_wrong_value_of_a_manifest_is_named_at_once(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "name: demo\nversion: [1, 2]\nkind: toolz\nrequires_env: TOKEN\nprovides_tools: 5\n",
    )

    with pytest.raises(ManifestError) as caught:
        load_manifest(path)

    # One fix, one run: not a problem revealed by each fix of the one before.
    assert str(caught.value) == (
        f"{path}:2: version: must be a string, not list; "
        "line 3: kind: must be 'general', 'backend' or 'toolset', not 'toolz'; "
        "line 4: requires_env: must be a list of names (write ['TOKEN']); "
        "line 5: provides_tools: must be a list of names (write ['5'])"  # numbers are read as text
    )


def test_each_wrong_value_of_a_manifest_names_its_line(tmp_path: Path) -> None:
    # As HOOK.yaml's do: the file and line an editor jumps to, then each other problem's line.
    path = write(tmp_path, "name: demo\nversion: 1.0\nkind: toolz\n\nrequires_env: TOKEN\n")

    with pytest.raises(ManifestError) as caught:
        load_manifest(path)

    assert str(caught.value) == (
        f"{path}:3: kind: must be 'general', 'backend' or 'toolset', not 'toolz'; "
        "line 5: requires_env: must be a list of names (write ['TOKEN'])"
    )


def test_a_bad_name_names_its_line(tmp_path: Path) -> None:
    path = write(tmp_path, "version: 1.0\nname: 'bad name!'\n")

    with pytest.raises(
        ManifestError, match=rf"^{re.escape(str(path))}:2: name: 'bad name!' is not a valid"
    ):
        load_manifest(path)


def test_a_key_written_twice_names_its_line_and_no_made_up_value(tmp_path: Path) -> None:
    # The safe loader builds a list after the check, so it said 'original value: "[]"' of
    # [area, greet].
    path = write(tmp_path, "name: demo\nprovides_tools: [area, greet]\nprovides_tools: [x]\n")

    with pytest.raises(ManifestError) as caught:
        load_manifest(path)

    assert str(caught.value) == (
        f'{path}:3: not valid YAML: found duplicate key "provides_tools": write each key once'
    )


def test_yaml_syntax_error_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, "name: demo\nversion: [1\n")

    with pytest.raises(ManifestError, match=rf"{path}:\d+: not valid YAML"):
        load_manifest(path)


def test_plugins_package_all_is_complete() -> None:
    public = {
        name
        for name, value in vars(hermes_core._plugins).items()
        if not name.startswith("_") and getattr(value, "__module__", "").startswith("hermes_core")
    }
    assert public <= set(hermes_core._plugins.__all__)
    assert len(set(hermes_core._plugins.__all__)) == len(hermes_core._plugins.__all__)
    assert all(hasattr(hermes_core._plugins, name) for name in hermes_core._plugins.__all__)


@pytest.mark.parametrize("written", ["1.10", "2", "1.0", "0x10", "2024-01-02", "'1.10'"])
def test_unquoted_version_is_read_as_written(tmp_path: Path, written: str) -> None:
    path = write(tmp_path, f"name: demo\nversion: {written}\n")

    assert load_manifest(path).version == written.strip("'")


def test_a_manifest_read_again_is_what_the_file_says_now(tmp_path: Path) -> None:
    from hermes_core._plugins.manifest import read_manifest_data

    path = write(tmp_path, "name: first\nprovides_tools: [a]\n")
    data = read_manifest_data(path)
    data["provides_tools"].append("added by the caller")
    assert read_manifest_data(path) == {"name": "first", "provides_tools": ["a"]}

    path.write_text("name: second\nprovides_tools: [b]\n", encoding="utf-8")
    assert load_manifest(path).name == "second"

    path.write_text("name: [unclosed\n", encoding="utf-8")
    with pytest.raises(ManifestError, match=r"plugin\.yaml:2: not valid YAML"):
        load_manifest(path)
    with pytest.raises(ManifestError, match=r"plugin\.yaml:2: not valid YAML"):
        load_manifest(path)
