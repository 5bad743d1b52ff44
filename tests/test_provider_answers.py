"""What a third-party web search or image provider answers is checked where the host builds it:
an exception outside its contract (``WebSearchError``, ``ImageError``), or an answer of the wrong
type, is the tool's error naming the provider and its plugin, never a bare ``TypeError`` or a
result silently dropped. Seen through the real ``hermes tools call`` (a subprocess), the
provider a pip plugin (a real ``*.dist-info`` on ``PYTHONPATH``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.testing import HermesCli, write_distribution

pytestmark = pytest.mark.subprocess

ODD_PROVIDERS = '''
"""A web search provider ``odd-web`` and an image provider ``odd-images`` that answer as
``plugins.entries.odd.answer`` says."""

from hermes_core.plugin import (
    GeneratedImage,
    ImageProviderSpec,
    WebResult,
    WebSearchProviderSpec,
    hookimpl,
)


class OddWeb:
    def __init__(self, answer):
        self.answer = answer

    async def search(self, query, limit):
        if self.answer == "raise":
            raise RuntimeError("the search service's socket closed")
        if self.answer == "dicts":
            return [{"title": "Otters", "url": "https://otters.example", "snippet": "..."}]
        if self.answer == "fields":
            return [WebResult(title=None, url=123, snippet=b"bytes")]
        return "no list"


class OddImages:
    def __init__(self, answer):
        self.answer = answer

    async def generate(self, request):
        if self.answer == "raise":
            raise RuntimeError("the GPU went away")
        if self.answer == "bytes":
            return b"\\x89PNG\\r\\n\\x1a\\n"
        if self.answer == "not an image":
            return [GeneratedImage(b"<html>sign in</html>", "image/png")]
        return [GeneratedImage(b"GIF89a....", "image/svg+xml")]

    async def aclose(self):
        pass


@hookimpl
def hermes_web_search_providers():
    return [WebSearchProviderSpec("odd-web", lambda context: OddWeb(context.settings["answer"]))]


@hookimpl
def hermes_image_providers():
    return [
        ImageProviderSpec("odd-images", lambda context: OddImages(context.settings["answer"]))
    ]
'''


def call(hermes_cli: HermesCli, tmp_path: Path, answer: str, tool: str, arguments: str) -> str:
    """``hermes tools call TOOL ARGUMENTS`` with the odd providers answering ``answer``: the
    tool's error, from stdout and stderr (exit status 1)."""
    site = tmp_path / "site"
    write_distribution(
        site,
        "hermes-odd",
        entry_points={"odd": "hermes_odd"},
        files={"hermes_odd/__init__.py": ODD_PROVIDERS},
    )
    hermes_cli.config.write_text(
        "plugins:\n  enabled: [odd]\n  entries:\n"
        f"    odd: {{answer: {answer}}}\n"
        "    web: {search_provider: odd-web}\n"
        "    media: {image_provider: odd-images}\n",
        encoding="utf-8",
    )
    done = hermes_cli.run(
        "tools", "call", tool, arguments, ok=False, env=hermes_cli.variables(PYTHONPATH=str(site))
    )
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    return done.stdout + done.stderr


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (
            "raise",
            "failed: search raised RuntimeError: the search service's socket closed",
        ),
        ("dicts", "search returned a list holding dict, not WebResult"),
        ("fields", "search returned a WebResult whose title is null, url is 123, snippet is"),
        ("list", "search returned str 'no list', not a list of WebResult"),
    ],
)
def test_a_web_search_providers_odd_answer_is_an_error_naming_it(
    hermes_cli: HermesCli, tmp_path: Path, answer: str, said: str
) -> None:
    output = call(hermes_cli, tmp_path, answer, "web_search", '{"query": "otters"}')

    assert "TOOL_ERROR" in output
    assert f"web search provider 'odd-web' (plugin 'odd') {said}" in output
    assert "No results" not in output


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        ("raise", "failed: generate raised RuntimeError: the GPU went away"),
        ("bytes", "generate returned bytes"),
        (
            "not an image",
            "generate returned image 1 of 1 as image/png, but its bytes are no image/png image",
        ),
        ("svg", "generate returned image 1 of 1 as 'image/svg+xml', not one of image/png"),
    ],
)
def test_an_image_providers_odd_answer_is_an_error_naming_it_and_nothing_is_saved(
    hermes_cli: HermesCli, tmp_path: Path, answer: str, said: str
) -> None:
    output = call(
        hermes_cli, tmp_path, answer, "image_generate", '{"prompt": "a fox", "path": "fox.png"}'
    )

    assert "TOOL_ERROR" in output
    assert f"image provider 'odd-images' (plugin 'odd') {said}" in output
    assert not (hermes_cli.work / "fox.png").exists()
