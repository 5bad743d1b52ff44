"""The test helpers of ``hermes_core.testing`` that plugin authors rely on."""

from __future__ import annotations

import gc
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from hermes_core import Host
from hermes_core._errors import UnloadedPluginError
from hermes_core._gc_pause import end_start_pause
from hermes_core.plugin import Tool, ToolAnnotations, hookimpl
from hermes_core.testing import (
    SEARCH_BACKEND_RULES,
    forget_modules_under,
    make_host,
    make_search_backend,
    search_backend_conformance,
    write_distribution,
)
from hermes_core.testing._cli_in_process import InProcessCli


def test_forget_modules_under_keeps_modules_of_a_sibling_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inside, sibling = tmp_path / "plug", tmp_path / "plug-sibling"
    for folder, module in ((inside, "forget_probe_inside"), (sibling, "forget_probe_sibling")):
        folder.mkdir()
        (folder / f"{module}.py").write_text("VALUE = 1\n", encoding="utf-8")
        monkeypatch.syspath_prepend(str(folder))
    try:
        importlib.import_module("forget_probe_inside")
        importlib.import_module("forget_probe_sibling")

        forget_modules_under(inside)

        assert "forget_probe_inside" not in sys.modules
        assert "forget_probe_sibling" in sys.modules
    finally:
        sys.modules.pop("forget_probe_inside", None)
        sys.modules.pop("forget_probe_sibling", None)


def test_forget_modules_under_follows_a_symlinked_folder_either_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "forget_probe_linked.py").write_text("VALUE = 1\n", encoding="utf-8")
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    for imported_from, forgotten_by in ((link, real), (real, link)):
        monkeypatch.syspath_prepend(str(imported_from))
        try:
            importlib.import_module("forget_probe_linked")

            forget_modules_under(forgotten_by)

            assert "forget_probe_linked" not in sys.modules, (imported_from, forgotten_by)
        finally:
            sys.modules.pop("forget_probe_linked", None)
            sys.path.remove(str(imported_from))
            importlib.invalidate_caches()


class Shouty:
    """A plugin object with one read-only tool."""

    @hookimpl
    def hermes_tools(self) -> list[Tool]:
        annotations = ToolAnnotations(read_only=True, destructive=False)
        return [
            Tool(
                "shout",
                "Shout.",
                {"type": "object", "properties": {"text": {"type": "string"}}},
                handler=lambda text: text.upper(),
                annotations=annotations,
            )
        ]


def test_make_host_starts_a_host_with_the_given_plugin_objects() -> None:
    host = make_host(plugins={"shouty": Shouty()})
    try:
        result = anyio.run(host.dispatch, "shout", {"text": "hi"}, host.new_session())
        sources = {record.name: record.source for record in host.plugins}
    finally:
        host.close()

    assert result.text_content == "HI"
    assert sources["shouty"] == "direct"
    assert sources["approvals"] == "bundled"


def test_hermes_host_runs_the_given_plugins_with_the_bundled_ones(
    hermes_host: Callable[..., Host],
) -> None:
    host = hermes_host({"shouty": Shouty()})

    result = anyio.run(host.dispatch, "shout", {"text": "hi"}, host.new_session())

    assert result.text_content == "HI"
    assert "read_file" in host.registry


def test_hermes_host_without_bundled_plugins_has_only_the_given_ones(
    hermes_host: Callable[..., Host],
) -> None:
    host = hermes_host({"shouty": Shouty()}, bundled=False)

    assert [record.name for record in host.plugins] == ["shouty"]
    # The three bridge tools and manage_connections are registry tools of every host.
    assert [tool.name for tool in host.registry] == [
        "shout",
        "tool_search",
        "tool_describe",
        "tool_call",
        "manage_connections",
    ]


def test_search_backend_conformance_gives_one_test_per_rule_named_after_it() -> None:
    params = search_backend_conformance(lambda: make_search_backend("bm25"))

    assert [param.id for param in params] == [
        rule.__name__.replace("_", "-") for rule in SEARCH_BACKEND_RULES
    ]
    assert "ties-keep-the-order-documents-were-added" in [param.id for param in params]


class IgnoresLimit:
    """A backend that returns more hits than asked (the bm25 index, asked for five more)."""

    def __init__(self) -> None:
        self.index = make_search_backend("bm25")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.index, name)

    def search(self, query: str, limit: int, admission: Any, extra: Any = ()) -> Any:
        return self.index.search(query, limit + 5, admission, extra)

    def __len__(self) -> int:
        return len(self.index)


def test_a_backend_breaking_a_rule_fails_its_check_saying_what_it_did() -> None:
    checks = {p.id: p.values[0] for p in search_backend_conformance(IgnoresLimit)}

    with pytest.raises(AssertionError, match="limit 1 gave 6 hits of 8 matching documents"):
        checks["search-returns-at-most-limit-hits-best-first"]()
    checks["build-replaces-the-whole-index"]()  # the other rules still hold


def test_an_in_process_serve_that_stops_at_its_start_leaves_the_collector_running(
    tmp_path: Path,
) -> None:
    # hermes serve pauses the collector for its start; one stopped before it serves (a token
    # file other accounts can read) ends its process there, but in process the test goes on.
    cli = InProcessCli(tmp_path)
    token = cli.home / "serve-token"
    token.parent.mkdir(parents=True, exist_ok=True)
    token.write_text("a-token-someone-left-readable\n", encoding="utf-8")
    token.chmod(0o644)
    assert gc.isenabled()
    done = cli.run("serve", "--transport", "http", "--port", "0", ok=False)
    assert done.returncode == 2, done.stderr
    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    end_start_pause()  # no start pause is left running either
    assert gc.get_freeze_count() == frozen


def test_an_in_process_command_finds_a_distribution_on_its_pythonpath_without_a_subprocess(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A pip plugin's test puts its site directory on PYTHONPATH; in process it goes first on
    # sys.path for the command only, as an interpreter would put it before its site-packages.
    cli = InProcessCli(tmp_path)
    site = tmp_path / "site"
    write_distribution(
        site,
        "hermes-pathdemo",
        entry_points={"pathdemo": "pathdemo_mod"},
        files={"pathdemo_mod.py": "def hermes_session_start(session):\n    pass\n"},
    )

    def no_subprocess(*args: str, **options: Any) -> Any:
        raise AssertionError(f"hermes {args} ran as a subprocess")

    monkeypatch.setattr(cli, "subprocess_run", no_subprocess)
    path = list(sys.path)
    rows = cli.json("plugins", "list", "--json", "--all", env=cli.variables(PYTHONPATH=str(site)))

    assert {(row["name"], row["source"]) for row in rows} >= {("pathdemo", "pip")}
    assert sys.path == path
    assert "pathdemo_mod" not in sys.modules


def test_an_in_process_command_freezes_nothing_and_leaves_the_frozen_heap_frozen(
    tmp_path: Path,
) -> None:
    # hermes freezes the heap where its process ends; in process the test process goes on,
    # and what it froze (its collection: conftest.py) stays frozen for its collections to skip.
    gc.freeze()
    frozen = gc.get_freeze_count()
    cli = InProcessCli(tmp_path)

    cli.run("tools", "list")

    # Not more (the command froze nothing), nor all unfrozen: frozen objects the command let go
    # (modules it forgot, replaced values) leave the count as they are freed.
    assert frozen // 2 < gc.get_freeze_count() <= frozen
    assert gc.isenabled()


def test_a_helper_asked_for_a_plugin_it_was_not_given_enabled_says_to_pass_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # make_search_backend (and make_host, make_model_provider) read no user config, yet the
    # error advised `hermes plugins enable stamp`, which changes nothing there.
    site = tmp_path / "site"
    write_distribution(
        site,
        "hermes-stamp",
        entry_points={"stamp": "stamp_mod"},
        files={"stamp_mod.py": "def hermes_session_start(session):\n    pass\n"},
    )
    monkeypatch.syspath_prepend(str(site))

    with pytest.raises(UnloadedPluginError) as caught:
        make_search_backend("stamp")

    message = str(caught.value)
    assert "plugin 'stamp' (pip" in message
    assert (
        "or, for a Config built in code, list it in plugins.enabled: "
        "config=Config.model_validate({'plugins': {'enabled': ['stamp']}})"
    ) in message
    assert "stamp_mod" not in sys.modules
