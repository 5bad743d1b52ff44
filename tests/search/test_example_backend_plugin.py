"""The example search backend of docs/tool-search.md, installed and selected as a user would."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest

from hermes_core._config import Config
from hermes_core._errors import RegistrationError
from hermes_core._host import Host
from hermes_core._paths import Environment
from hermes_core.testing import forget_modules_under

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "search_backend_plugin"


@pytest.fixture
def env(tmp_path: Path) -> Any:
    home = tmp_path / "home"
    (tmp_path / "work").mkdir()
    shutil.copytree(EXAMPLE, home / "plugins" / "keyword-search")
    yield Environment(
        home=home,
        cwd=tmp_path / "work",
        variables={"HERMES_LOG_DIR": str(tmp_path / "logs"), "HERMES_STRICT_PLUGINS": "1"},
    )
    forget_modules_under(tmp_path)


def _search(env: Environment, config: Config, query: str) -> Any:
    async def main() -> Any:
        async with Host(config, env) as host:
            result = await host.dispatch("tool_search", {"queries": [query]}, host.new_session())
            return type(host.tool_search.backend).__name__, result.structured

    return anyio.run(main)


def test_installed_example_backend_is_selected_by_name(env: Environment) -> None:
    config = Config.model_validate(
        {
            "plugins": {"enabled": ["keyword-search"]},
            # strict: the keyword backend then asks for every query word
            "tools": {"tool_search": {"backend": "keyword", "admission": "strict"}},
        }
    )
    backend, answer = _search(env, config, "todo list")
    assert backend == "KeywordBackend"
    assert answer["results"][0]["matches"] == ["todo_list"]


def test_example_backend_not_enabled_is_an_error_listing_valid_backends(
    env: Environment,
) -> None:
    config = Config.model_validate({"tools": {"tool_search": {"backend": "keyword"}}})
    with pytest.raises(RegistrationError, match=r"'keyword'.*valid names: bm25"):
        _search(env, config, "todo list")
