"""``hermes config set`` refuses what ``hermes config validate`` refuses, plugins' names and
settings included, before writing, and ``hermes plugins disable`` by the same rule; the real
command, as a subprocess, in a temporary home."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_core.testing import HermesCli

pytestmark = pytest.mark.subprocess

MINE = "# mine\n"

MARKED_POLICY = """
from pathlib import Path

from hermes_core.plugin import ApprovalPolicySpec, hookimpl

Path(__file__).with_name("imported").touch()


class Mine:
    def decide(self, call, session):
        return None


@hookimpl
def hermes_approval_policies():
    return [ApprovalPolicySpec("mine", lambda context: Mine())]
"""


@pytest.fixture
def cli(tmp_path: Path) -> HermesCli:
    return HermesCli(tmp_path)


def _marked_plugin(cli: HermesCli) -> Path:
    """A user plugin registering the approval policy ``mine``; the file its import makes."""
    folder = cli.home / "plugins" / "marked"
    folder.mkdir(parents=True)
    (folder / "plugin.yaml").write_text("name: marked\nversion: 1.0.0\n", encoding="utf-8")
    (folder / "__init__.py").write_text(MARKED_POLICY, encoding="utf-8")
    return folder / "imported"


REFUSED = [
    (
        MINE,
        "approvals.policy",
        "manul",
        MINE + "approvals:\n  policy: manul\n",
        ":3: unknown approval policy 'manul' (set by approvals.policy); valid names: "
        "annotations, manual, off. Did you mean 'manual'?",
    ),
    (
        MINE,
        "tools.tool_search.backend",
        "bm52",
        MINE + "tools:\n  tool_search:\n    backend: bm52\n",
        ":4: unknown search backend 'bm52' (set by tools.tool_search.backend)",
    ),
    (
        "tools:\n  connectors:\n    url: https://example.org/mcp\n",
        "tools.connectors.gateway",
        "nope",
        "tools:\n  connectors:\n    url: https://example.org/mcp\n    gateway: nope\n",
        ":4: unknown connector gateway 'nope' (set by tools.connectors.gateway)",
    ),
    (
        MINE,
        "model.provider",
        "opnai",
        MINE + "model:\n  provider: opnai\n",
        ":3: unknown model provider 'opnai' (set by model.provider)",
    ),
    (
        MINE,
        "memory.provider",
        "fil",
        MINE + "memory:\n  provider: fil\n",
        ":3: unknown memory provider 'fil' (set by memory.provider)",
    ),
    (
        MINE,
        "plugins.entries.web.search_provider",
        "serxng",
        MINE + "plugins:\n  entries:\n    web:\n      search_provider: serxng\n",
        ":5: unknown web search provider 'serxng' (set by "
        "plugins.entries.web.search_provider); valid names: brave, searxng. "
        "Did you mean 'searxng'?",
    ),
    (
        MINE,
        "plugins.entries.media.image_provider",
        "opnai",
        MINE + "plugins:\n  entries:\n    media:\n      image_provider: opnai\n",
        ":5: unknown image provider 'opnai' (set by plugins.entries.media.image_provider)",
    ),
    (
        MINE,
        "plugins.entries.code_execution.timeout",
        "abc",
        MINE + "plugins:\n  entries:\n    code_execution:\n      timeout: abc\n",
        ":5: plugins.entries.code_execution.timeout: expected a number greater than 0, got 'abc'",
    ),
    (
        MINE,
        "plugins.entries.code_execution.mod",
        "strict",
        MINE + "plugins:\n  entries:\n    code_execution:\n      mod: strict\n",
        ":5: plugins.entries.code_execution.mod: unknown key, did you mean 'mode'?",
    ),
    (
        "model:\n  provider: anthropic\n  reasoning_effort: high\n",
        "model.max_output_tokens",
        "1000",
        "model:\n  provider: anthropic\n  reasoning_effort: high\n  max_output_tokens: 1000\n",
        "model.max_output_tokens: 1,000 is not above the anthropic provider's thinking budget",
    ),
]


@pytest.mark.parametrize(
    ("before", "key", "value", "after", "words"), REFUSED, ids=[case[1] for case in REFUSED]
)
def test_set_refuses_what_validate_refuses_in_its_words_and_writes_nothing(
    cli: HermesCli, before: str, key: str, value: str, after: str, words: str
) -> None:
    """``config set approvals.policy manul`` was written with exit 0, and every later command
    then stopped with exit 2 on the unknown name (configset's walk): a name only a plugin
    registers, or a setting only a plugin's typed settings judge, was never checked by set."""
    path = cli.config
    path.write_text(before, encoding="utf-8")

    refused = cli.run("config", "set", key, value, ok=False)

    assert refused.returncode == 2, refused.stderr
    assert refused.stdout == ""
    assert words in refused.stderr
    assert path.read_text(encoding="utf-8") == before
    assert sorted(p.name for p in cli.home.iterdir()) == ["config.yaml"]
    path.write_text(after, encoding="utf-8")
    validated = cli.run("config", "validate", ok=False)
    assert validated.returncode == 2
    assert refused.stderr == validated.stderr


def test_set_accepts_a_name_an_enabled_plugin_registers_and_runs_no_plugin_it_enables(
    cli: HermesCli,
) -> None:
    """The plugins are loaded as ``validate`` loads them, but only those the file enabled
    already: a plugin enabled by this very edit runs at the next command, not in ``set``."""
    imported = _marked_plugin(cli)

    refused = cli.run("config", "set", "approvals.policy", "mine", ok=False)
    enabled = cli.run("config", "set", "plugins.enabled", "[marked]")
    assert not imported.exists()
    chosen = cli.run("config", "set", "approvals.policy", "mine")
    mistyped = cli.run("config", "set", "approvals.policy", "mien", ok=False)

    assert refused.returncode == 2
    assert "unknown approval policy 'mine'" in refused.stderr
    assert enabled.stdout.startswith('plugins.enabled = ["marked"]')
    assert chosen.stdout.startswith('approvals.policy = "mine"')
    assert imported.exists()
    assert mistyped.returncode == 2
    assert "valid names: annotations, manual, mine, off. Did you mean 'mine'?" in mistyped.stderr
    assert cli.config.read_text(encoding="utf-8") == (
        "plugins:\n  enabled:\n  - marked\napprovals:\n  policy: mine\n"
    )


def test_set_checks_only_the_keys_of_a_file_the_project_gate_holds_back(tmp_path: Path) -> None:
    """A file in the project is not in effect while the gate is closed: ``validate`` checks
    its keys and values only, loading no plugin, and so does ``set``."""
    work = tmp_path / "project"
    cli = HermesCli(tmp_path, home=work / ".hermes", work=work)

    done = cli.run("config", "set", "approvals.policy", "manul")
    validated = cli.run("config", "validate")

    assert "saved, but not in effect" in done.stderr
    assert cli.config.read_text(encoding="utf-8") == "approvals:\n  policy: manul\n"
    assert validated.stdout.startswith("ok: ")


def test_set_fixes_one_of_two_problems_already_in_the_file_and_refuses_only_a_new_one(
    cli: HermesCli,
) -> None:
    """A plugin uninstalled can leave two names no plugin registers (its policy, its backend):
    each ``set`` that fixes one must not be refused for the other, or only an editor could mend
    the file. What was there already is said as a warning; a problem the edit adds is refused."""
    path = cli.config
    path.write_text(
        MINE + "approvals:\n  policy: manul\ntools:\n  tool_search:\n    backend: bm52\n",
        encoding="utf-8",
    )

    fixed = cli.run("config", "set", "approvals.policy", "manual")
    assert "approvals:\n  policy: manual\n" in path.read_text(encoding="utf-8")
    assert "unknown search backend 'bm52'" in fixed.stderr  # still there: said, not fatal
    assert "hermes: warning:" in fixed.stderr
    before = path.read_text(encoding="utf-8")

    worse = cli.run("config", "set", "model.provider", "opnai", ok=False)
    assert worse.returncode == 2
    assert "unknown model provider 'opnai'" in worse.stderr
    assert path.read_text(encoding="utf-8") == before

    cli.run("config", "set", "tools.tool_search.backend", "bm25")
    assert cli.run("config", "validate").stdout.startswith("ok: ")


IN_USE = (
    "bm25 is the search backend in use (tools.tool_search.backend): choose another search "
    "backend first"
)


@pytest.mark.parametrize(
    "command",
    [("plugins", "disable", "bm25"), ("config", "set", "plugins.disabled", "[bm25]")],
    ids=["plugins disable", "config set"],
)
def test_disabling_the_plugin_of_the_search_backend_in_use_is_refused_saying_what_it_would_do(
    cli: HermesCli, command: tuple[str, ...]
) -> None:
    """``plugins disable bm25`` wrote with exit 0, and then ``tools search`` exited 1 and
    ``config validate`` 2; ``config set plugins.disabled [bm25]`` was refused in validate's
    words for a state it had not written ("plugin 'bm25' is disabled: hermes plugins enable
    bm25"). Both refuse it, by one rule, saying what the edit would do and what to do first."""
    cli.config.write_text(MINE, encoding="utf-8")

    refused = cli.run(*command, ok=False)

    assert refused.returncode == 2, refused.stderr
    assert refused.stdout == ""
    assert f"hermes: error: cannot disable bm25: {IN_USE}" in refused.stderr
    assert "hermes plugins enable" not in refused.stderr
    assert cli.config.read_text(encoding="utf-8") == MINE


def test_disabling_a_plugin_whose_policy_or_provider_is_in_use_is_refused_until_another_is_chosen(
    cli: HermesCli,
) -> None:
    """The same for every name a plugin provides that the file selects: the approval policy of
    a user plugin (named otherwise than its plugin), the model provider, the memory provider
    (memory can be turned off instead); once another is chosen, the plugin is disabled."""
    _marked_plugin(cli)
    cli.run("config", "set", "plugins.enabled", "[marked]")
    cli.run("config", "set", "approvals.policy", "mine")
    before = cli.config.read_text(encoding="utf-8")

    policy = cli.run("plugins", "disable", "marked", ok=False)
    provider = cli.run("plugins", "disable", "openai", ok=False)
    memory = cli.run("plugins", "disable", "memory", ok=False)
    assert cli.config.read_text(encoding="utf-8") == before
    cli.run("config", "set", "approvals.policy", "manual")
    done = cli.run("plugins", "disable", "marked")

    assert policy.returncode == 2
    assert (
        "hermes: error: cannot disable marked: marked provides 'mine', the approval policy in "
        "use (approvals.policy): choose another approval policy first"
    ) in policy.stderr
    assert provider.returncode == 2
    assert (
        "cannot disable openai: openai is the model provider in use (model.provider): choose "
        "another model provider first"
    ) in provider.stderr
    assert (
        "cannot disable memory: memory provides 'file', the memory provider in use "
        "(memory.provider): choose another memory provider, or turn memory off "
        "(memory.enabled false), first"
    ) in memory.stderr
    assert done.stdout.startswith("disabled marked in ")
    assert cli.run("config", "validate").stdout.startswith("ok: ")


def test_disabling_a_plugin_nothing_selects_is_done(cli: HermesCli) -> None:
    done = cli.run("plugins", "disable", "todo")

    assert done.stdout.startswith("disabled todo in ")
    assert cli.run("config", "validate").stdout.startswith("ok: ")


def test_set_that_moves_a_plugin_settings_problem_already_there_warns_and_writes(
    cli: HermesCli,
) -> None:
    """A plugin's settings problem names its line in the middle of its words (``plugin 'web':
    FILE:6: ...``): an edit adding a line above it moved that line, and the problem the file
    had already was refused as new, so no ``set`` above it could go through."""
    path = cli.config
    path.write_text(
        "model:\n  model: x\nplugins:\n  entries:\n    web:\n      max_results: lots\n",
        encoding="utf-8",
    )

    moved = cli.run("config", "set", "model.timeout", "30")

    assert moved.stdout.startswith("model.timeout = 30")
    assert f"hermes: warning: plugin 'web': {path}:7: plugins.entries.web.max_results" in (
        moved.stderr
    )
    assert "(in the file already)" in moved.stderr
    assert "hermes: error:" not in moved.stderr
    assert "  timeout: 30\n" in path.read_text(encoding="utf-8")
