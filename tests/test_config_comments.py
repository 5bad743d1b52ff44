"""Comments survive edits made through ConfigDocument: every full-line comment that belongs to
something the edit did not remove stays, in order, above the key or item it was written for."""

from __future__ import annotations

import copy
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML
from strength import STRENGTH

from hermes_core._config import ConfigDocument, load_config
from hermes_core._errors import ConfigError


def _edit(tmp_path: Path, text: str) -> tuple[Path, ConfigDocument]:
    path = tmp_path / "config.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path, ConfigDocument.load(path)


def _saved(path: Path, document: ConfigDocument) -> str:
    document.save()
    return path.read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# Text that ruamel does not keep on loading


def test_a_file_of_comments_only_keeps_them_after_the_first_edit(tmp_path: Path) -> None:
    path, document = _edit(
        tmp_path,
        """\
        # hermes configuration
        # plugins:
        #   enabled: [foo]
        """,
    )
    document.add_to_list("plugins.enabled", "x")
    text = _saved(path, document)
    assert text.startswith("# hermes configuration\n# plugins:\n#   enabled: [foo]\n")
    assert load_config(path).plugins.enabled == ["x"]


def test_comments_before_the_document_start_marker_are_kept(tmp_path: Path) -> None:
    path, document = _edit(
        tmp_path,
        """\
        # my hermes config
        ---
        plugins:
          enabled: [a]
        """,
    )
    document.add_to_list("plugins.enabled", "b")
    assert _saved(path, document) == "# my hermes config\n---\nplugins:\n  enabled: [a, b]\n"
    assert load_config(path).plugins.enabled == ["a", "b"]


def test_deleting_every_section_keeps_the_files_comments(tmp_path: Path) -> None:
    path, document = _edit(
        tmp_path,
        """\
        # header

        plugins:
          enabled: [a]
        # why tools are tuned
        tools:
          tool_search:
            threshold_pct: 6
        # closing comment
        """,
    )
    assert document.delete("plugins")
    assert document.delete("tools")
    assert _saved(path, document) == "# header\n\n# why tools are tuned\n# closing comment\n"
    assert document.get("plugins") is None
    document.set("plugins.enabled", ["b"])
    text = _saved(path, document)
    assert text.startswith("# header\n\n# why tools are tuned\n# closing comment\n")
    assert load_config(path).plugins.enabled == ["b"]


def test_crlf_line_endings_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_bytes(b"# mine\r\nplugins:\r\n  # trusted\r\n  enabled: [a]\r\n")
    document = ConfigDocument.load(path)
    document.add_to_list("plugins.enabled", "b")
    document.save()
    assert path.read_bytes() == b"# mine\r\nplugins:\r\n  # trusted\r\n  enabled: [a, b]\r\n"


def test_a_section_with_everything_commented_out_is_its_defaults(tmp_path: Path) -> None:
    path, document = _edit(
        tmp_path,
        """\
        # everything commented out for now
        plugins:
        #  enabled: [foo]
        tools:
          tool_search:
            threshold_pct: 6
          connectors:
        """,
    )
    config = load_config(path)
    assert config.plugins.enabled == []
    assert config.plugins.hook_timeout == 30.0
    assert config.tools.connectors.enabled is True
    assert config.tools.tool_search.threshold_pct == 6
    document.add_to_list("plugins.enabled", "x")
    text = _saved(path, document)
    assert "#  enabled: [foo]\n" in text
    assert load_config(path).plugins.enabled == ["x"]


def test_null_still_means_null_where_it_is_a_value(tmp_path: Path) -> None:
    path, _ = _edit(tmp_path, "approvals:\n  policy:\n")
    with pytest.raises(ConfigError, match="expected text, got null") as caught:
        load_config(path)
    assert caught.value.key == "approvals.policy"


# ---------------------------------------------------------------------------------------------
# Adding, replacing and removing entries


def test_appended_item_goes_above_the_comment_about_the_next_key(tmp_path: Path) -> None:
    path, document = _edit(
        tmp_path,
        """\
        plugins:
          enabled:
            - foo
          # Plugins listed below never load.
          disabled:
            - bar
        """,
    )
    document.add_to_list("plugins.enabled", "baz")
    assert "    - foo\n    - baz\n  # Plugins listed below never load.\n  disabled:" in _saved(
        path, document
    )


def test_removing_the_first_item_keeps_the_comment_about_the_second(tmp_path: Path) -> None:
    path, document = _edit(
        tmp_path,
        """\
        plugins:
          enabled:
            - a   # first
            # b is the one search needs
            - b
        """,
    )
    document.remove_from_list("plugins.enabled", "a")
    text = _saved(path, document)
    assert text == "plugins:\n  enabled:\n    # b is the one search needs\n    - b\n"
    assert load_config(path).plugins.enabled == ["b"]


def test_removing_an_item_keeps_the_comment_written_above_it(tmp_path: Path) -> None:
    path, document = _edit(
        tmp_path,
        """\
        plugins:
          enabled:
            - a
            # the rest is for search
            - b
            - c
        """,
    )
    document.remove_from_list("plugins.enabled", "b")
    assert _saved(path, document) == (
        "plugins:\n  enabled:\n    - a\n    # the rest is for search\n    - c\n"
    )


def test_emptying_a_list_keeps_the_comment_about_the_next_key(tmp_path: Path) -> None:
    path, document = _edit(
        tmp_path,
        """\
        plugins:
          disabled:
            - x
          # settings for each plugin
          entries: {}
        """,
    )
    document.remove_from_list("plugins.disabled", "x")
    assert "  disabled: []\n  # settings for each plugin\n  entries: {}" in _saved(path, document)


def test_replacing_a_list_keeps_the_comment_about_the_next_key(tmp_path: Path) -> None:
    path, document = _edit(
        tmp_path,
        """\
        plugins:
          enabled:
            - a
          # never load these
          disabled: [c]
        """,
    )
    document.set("plugins.enabled", ["z"])
    assert "# never load these\n  disabled: [c]" in _saved(path, document)


@pytest.mark.parametrize(
    ("text", "deleted", "kept"),
    [
        pytest.param(
            """\
            approvals:
              policy: manual   # ask for everything
              # globs that are always allowed
              allow: [read_*]
            """,
            "approvals.policy",
            "approvals:\n  # globs that are always allowed\n  allow: [read_*]\n",
            id="scalar-before-flow-list",
        ),
        pytest.param(
            """\
            tools:
              tool_search:
                threshold_pct: 5   # percent
                # names deferred
                defer:
                  - todo_list
            """,
            "tools.tool_search.threshold_pct",
            "    # names deferred\n    defer:\n      - todo_list\n",
            id="scalar-before-block-list",
        ),
        pytest.param(
            """\
            plugins:
              disabled: [zeta]
              # end of plugins
            approvals:
              policy: manual
            # end of file
            """,
            "approvals",
            "plugins:\n  disabled: [zeta]\n  # end of plugins\n# end of file\n",
            id="section-after-a-flow-list",
        ),
    ],
)
def test_deleting_a_key_keeps_the_comment_about_the_next_key(
    tmp_path: Path, text: str, deleted: str, kept: str
) -> None:
    path, document = _edit(tmp_path, text)
    assert document.delete(deleted)
    assert _saved(path, document).endswith(kept)


# ---------------------------------------------------------------------------------------------
# Keys under a scalar


def test_get_under_a_scalar_is_none(tmp_path: Path) -> None:
    _, document = _edit(tmp_path, "tools:\n  connectors: false\n")
    assert document.get("tools.connectors.url") is None
    assert document.delete("tools.connectors.url") is False
    assert document.remove_from_list("tools.connectors.url", "x") is False


def test_set_under_a_scalar_is_a_config_error_naming_the_key(tmp_path: Path) -> None:
    _, document = _edit(tmp_path, "tools:\n  connectors: false\n")
    with pytest.raises(ConfigError) as caught:
        document.set("tools.connectors.url", "https://gateway.example")
    assert caught.value.key == "tools.connectors"
    with pytest.raises(ConfigError) as caught:
        document.add_to_list("tools.connectors.names", "x")
    assert caught.value.key == "tools.connectors"


# ---------------------------------------------------------------------------------------------
# Any sequence of edits keeps every comment that belongs to something still in the file

COMMENTED = """\
# hermes configuration
tools:
  tool_search:   # deferral
    threshold_pct: 5   # percent
    # names deferred
    defer:
      - todo_list   # the todo tool
      # process tool too
      - process_manage
    # visible always
    always_visible: []
  # connectors section
  connectors:
    enabled: true
plugins:
  # loaded plugins
  enabled:
    - alpha
    - beta   # second
    # last one
    - gamma
  # never loaded
  disabled: [zeta]
  # end of plugins
approvals:
  policy: manual   # ask
  # always allowed
  allow:
    - read_*
  # refused
  deny: []
# end of file
"""

FOUR_SPACES = """\
# my settings
---
# four-space style

plugins:
    enabled:
        # listed one per line
        - alpha   # first
        - beta
        # off for now
        - zeta
    disabled: [gamma]

# tuned by hand
tools:
    tool_search:
        # numbers
        threshold_pct: 7
        always_visible:
            - x
    # gateway
    connectors: false
approvals:
    allow: []   # nothing yet
    # fallbacks
    deny:
        - y
# the end
"""

STARTER = """\
# hermes configuration: every setting is commented out
# plugins:
#   enabled: [foo]
"""

_LISTS = [
    "tools.tool_search.defer",
    "tools.tool_search.always_visible",
    "plugins.enabled",
    "plugins.disabled",
    "approvals.allow",
    "approvals.deny",
    "hooks.enabled",
]
_SCALARS = [
    ("tools.tool_search.threshold_pct", st.integers(0, 100)),
    ("approvals.policy", st.sampled_from(["manual", "off", "annotations"])),
    ("plugins.hook_timeout", st.integers(1, 1000)),
    ("plugins.entries.code_execution.timeout", st.integers(1, 1000)),
]
_NAMES = st.sampled_from(["alpha", "beta", "gamma", "zeta", "todo_list", "read_*", "x", "y"])
_EDITS = st.one_of(
    st.tuples(st.just("add_to_list"), st.sampled_from(_LISTS), _NAMES),
    st.tuples(st.just("remove_from_list"), st.sampled_from(_LISTS), _NAMES),
    st.tuples(st.just("set"), st.sampled_from(_LISTS), st.lists(_NAMES, max_size=3, unique=True)),
    st.sampled_from(_SCALARS).flatmap(
        lambda pair: st.tuples(st.just("set"), st.just(pair[0]), pair[1])
    ),
    st.tuples(
        st.just("delete"),
        st.sampled_from(
            [
                *_LISTS,
                *(key for key, _ in _SCALARS),
                "tools.connectors",
                "tools.tool_search",
                "tools",
                "plugins",
                "approvals",
            ]
        ),
        st.none(),
    ),
)


def _full_line_comments(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().startswith("#")]


def _last_line(node: Any) -> int:
    """The 0-based line of the last entry written inside a round-trip collection."""
    if isinstance(node, dict) and node:
        key = list(node)[-1]
        value = node[key]
        if isinstance(value, dict | list) and value:
            return _last_line(value)
        line: int = node.lc.value(key)[0]
        return line
    if isinstance(node, list) and node:
        if isinstance(node[-1], dict | list) and node[-1]:
            return _last_line(node[-1])
        line = node.lc.item(len(node) - 1)[0]
        return line
    return -1


def _owners(text: str) -> dict[str, list[str]]:
    """For each dotted key holding a non-empty collection, the full-line comments written
    strictly inside it (between its key and its last entry): they go when it goes."""
    document = YAML(typ="rt").load(text)
    lines = text.splitlines()
    owned: dict[str, list[str]] = {}

    def visit(node: Any, prefix: str) -> None:
        for key, value in node.items():
            if not (isinstance(value, dict | list) and value):
                continue
            dotted = f"{prefix}{key}"
            first, last = node.lc.key(key)[0], _last_line(value)
            owned[dotted] = [
                line.strip() for line in lines[first + 1 : last] if line.strip().startswith("#")
            ]
            if isinstance(value, dict):
                visit(value, dotted + ".")

    if isinstance(document, dict):
        visit(document, "")
    return owned


def _expected_after(data: dict[str, Any], method: str, key: str, value: Any) -> None:
    *path, last = key.split(".")
    node: Any = data
    for part in path:
        if method in ("delete", "remove_from_list") and not isinstance(node.get(part), dict):
            return
        node = node.setdefault(part, {})
    if method == "set":
        node[last] = copy.deepcopy(value)
    elif method == "delete":
        node.pop(last, None)
    elif method == "add_to_list" and value not in node.setdefault(last, []):
        node[last].append(value)
    elif method == "remove_from_list" and isinstance(node.get(last), list):
        node[last] = [item for item in node[last] if item != value]


@pytest.mark.parametrize("strength", STRENGTH)
def test_any_sequence_of_edits_keeps_every_comment_of_what_is_left(
    tmp_path_factory: pytest.TempPathFactory, strength: int
) -> None:
    @settings(max_examples=20 * strength, deadline=None)
    @given(
        edits=st.lists(_EDITS, min_size=1, max_size=8),
        text=st.sampled_from([COMMENTED, FOUR_SPACES, STARTER]),
        crlf=st.booleans(),
    )
    def check(edits: list[tuple[str, str, Any]], text: str, crlf: bool) -> None:
        _edits_keep_every_comment_of_what_is_left(tmp_path_factory, edits, text, crlf)

    check()


def _edits_keep_every_comment_of_what_is_left(
    tmp_path_factory: pytest.TempPathFactory,
    edits: list[tuple[str, str, Any]],
    text: str,
    crlf: bool,
) -> None:
    path = tmp_path_factory.mktemp("home") / "config.yaml"
    path.write_bytes(text.replace("\n", "\r\n" if crlf else "\n").encode())
    expected = YAML(typ="safe").load(text) or {}
    owners = _owners(text)
    document = ConfigDocument.load(path)
    may_go: set[str] = set()
    for method, key, value in edits:
        getattr(document, method)(key, *([] if method == "delete" else [value]))
        _expected_after(expected, method, key, value)
        if method in ("set", "delete"):
            for owner, comments in owners.items():
                if owner == key or owner.startswith(key + "."):
                    may_go.update(comments)
    document.save()
    raw = path.read_bytes()
    assert (b"\r\n" in raw) == crlf
    saved = raw.decode("utf-8").replace("\r\n", "\n")
    assert (YAML(typ="safe").load(saved) or {}) == expected, saved
    kept = _full_line_comments(saved)
    assert kept == [c for c in _full_line_comments(text) if c not in may_go or c in kept], saved
