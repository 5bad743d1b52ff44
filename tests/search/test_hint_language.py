"""tool_search's hints in the query's language: what was not understood, said in Chinese,
Japanese, Korean, Spanish, French or German when the query is; English otherwise."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from bridge_fixtures import mcp_tool, registry_of, session, tool_search

from hermes_core.search import query_language


@pytest.mark.parametrize(
    ("query", "language"),
    [
        ("部署服务器", "zh"),
        ("创建 GitHub issue", "zh"),
        ("GitHub イシューを作成", "ja"),
        ("課題を作成", "ja"),  # Han and kana: Japanese
        ("이슈 생성해줘", "ko"),
        ("crear una incidencia en el proyecto", "es"),
        ("¿puedes borrar mi archivo?", "es"),
        ("créer une issue pour le projet", "fr"),
        ("supprime le fichier", "fr"),
        ("erstelle eine neue Datei", "de"),
        ("lösche die Nachricht", "de"),
        ("github create issue", "en"),
        ("send the report to bob", "en"),
        ("café menu", "en"),  # an accent alone is no language
        # English with a word of another language in it (a place, a unit): still English
        ("I need a rental home in Los Angeles with 3 bedrooms", "en"),
        ("time in America/Los_Angeles", "en"),
        ("set the memory limit of the api deployment to 512Mi", "en"),
        ("Can you suggest a trendy caf茅 in New York City with vegan options?", "en"),
    ],
)
def test_the_query_language_is_told_from_the_query(query: str, language: str) -> None:
    assert query_language(query) == language


@pytest.mark.parametrize(
    ("query", "language"),
    [
        ("创建 GitHub issue", "zh"),
        ("GitHub イシューを作成", "ja"),
        ("crear un evento en el calendario", "es"),
        ("erstelle eine neue Datei", "de"),
        ("créer une issue pour le projet", "fr"),
        # one common word of another language, or its letters, in an English query: a name
        ("Los Angeles weather", "en"),
        ("kill die process", "en"),
        ("von Neumann architecture", "en"),
        ("email Müller", "en"),
        ("send message on 微信", "en"),
        ("Tom・Jones", "en"),
    ],
)
def test_a_certain_language_needs_its_script_or_two_of_its_words(query: str, language: str) -> None:
    assert query_language(query, certain=True) == language


def _result(query: str, limit: int | None = None) -> dict[str, Any]:
    search = tool_search(
        registry_of(
            [
                mcp_tool("github", "create_issue", "Create an issue in a repository."),
                mcp_tool("slack", "post_message", "Post a message to a Slack channel."),
            ]
        )
    )
    answer = anyio.run(search.search, [query], limit, session())
    result: dict[str, Any] = answer["results"][0]
    return result


@pytest.mark.parametrize(
    ("query", "unmatched", "said"),
    [
        ("部署服务器", ["部署服务器"], "未能理解 '部署服务器'：没有工具包含这些词"),
        ("サーバーをデプロイ", ["サーバー", "デプロイ"], "を理解できませんでした"),
        ("서버 배포", ["서버", "배포"], "을(를) 이해하지 못했습니다"),
        ("desplegar el servidor", ["desplegar", "servidor"], "No se entendió 'desplegar'"),
        ("déployer le serveur", ["deployer", "serveur"], "'serveur' n'a pas été compris"),
        ("den Server bereitstellen", ["server", "bereitstellen"], "Nicht verstanden: 'server'"),
    ],
)
def test_a_query_matching_nothing_is_answered_in_its_language_naming_its_words(
    query: str, unmatched: list[str], said: str
) -> None:
    result = _result(query)
    assert result["matches"] == []
    assert result["unmatched"] == unmatched
    assert said in result["hint"]
    assert "No tool matched" not in result["hint"]


def test_a_word_other_tools_hold_is_named_in_the_querys_language() -> None:
    result = _result("crear issue en github", limit=1)
    assert result["matches"] == ["mcp__github__create_issue"]
    assert result["unmatched"] == []
    other = _result("enviar mensaje en slack a github", limit=1)  # one tool holds each
    assert other["matches"] == ["mcp__slack__post_message"]
    assert other["unmatched"] == ["github"]
    assert other["hint"].startswith("Ninguno de estos resultados contiene 'github', pero otras")


def test_an_english_query_keeps_the_english_hint() -> None:
    result = _result("deploy server")
    assert result["hint"].startswith("No tool matched 'deploy server'.")
