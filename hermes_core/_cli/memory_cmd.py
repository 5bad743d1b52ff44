"""``hermes memory``: the agent's memory seen and trimmed by the user, without asking the model.

Both go through the provider ``memory.provider`` selects, as the ``memory`` tool does: ``list``
reads each part, ``remove`` is the tool's own ``remove`` (one entry by a substring of it alone,
under the home's memory lock), so the user's edit and a running chat's never write over each
other. Starting the host loads the plugins (the provider is one) but waits for no MCP server.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import click

from hermes_core._cli.context import environment, load_config_in_effect
from hermes_core._cli.output import echo_shown

if TYPE_CHECKING:
    from hermes_core._host import Host
    from hermes_core.agent._memory import Memory


@click.group("memory")
def memory() -> None:
    """See the agent's memory and remove entries from it."""


def _memory_off() -> bool:
    """Whether ``memory.enabled`` is false, said on stderr: no provider is built then."""
    env = environment()
    if load_config_in_effect(env).memory.enabled:
        return False
    click.echo(
        f"hermes: warning: the memory is off (memory.enabled: false in {env.config_path}): "
        "the model has no memory tool and no snapshot",
        err=True,
    )
    return True


def _with_memory(work: Any) -> Any:
    """``work(memory)`` over the memory of the configuration in effect (not ``None``: the
    caller checked :func:`_memory_off`)."""
    from hermes_core._cli.host_runs import run_with_host
    from hermes_core.agent._memory import selected_memory

    async def main(host: Host) -> Any:
        selected = selected_memory(host)
        assert selected is not None  # memory.enabled was checked first
        return work(selected)

    return run_with_host(main, read_only=True, wait_only=frozenset(), hold_background=True)


@memory.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON object.")
def list_command(as_json: bool) -> None:
    """Each part (memory, user) with its use of its budget and its entries, in order."""
    from hermes_core.agent._memory_provider import MEMORY_TARGETS

    if _memory_off():
        if as_json:  # what --json promises, empty: a script reads no provider and no part
            click.echo(json.dumps({"provider": None, "parts": []}, indent=2))
        return

    def read(selected: Memory) -> dict[str, Any]:
        parts = []
        for target in MEMORY_TARGETS:
            try:
                entries = selected.load(target)
            except (OSError, ValueError) as exc:  # the provider's message names what and where
                echo_shown(
                    f"hermes: error: memory: the {target} part cannot be read: {exc}", err=True
                )
                sys.exit(1)
            used, budget = selected.usage(entries), selected.budgets[target]
            parts.append({"target": target, "used": used, "budget": budget, "entries": entries})
        return {"provider": selected.source, "parts": parts}

    data = _with_memory(read)
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    for part in data["parts"]:
        count = len(part["entries"])
        counted = f"{count} {'entry' if count == 1 else 'entries'}"
        click.echo(f"{part['target']}: {part['used']}/{part['budget']} characters, {counted}")
        for number, entry in enumerate(part["entries"], start=1):
            # Text from a file anyone with the home can edit: shown, never sent raw to a terminal.
            echo_shown(f"  {number}. " + entry.replace("\n", "\n     "))


@memory.command("remove")
@click.argument("target", type=click.Choice(["memory", "user"]))
@click.argument("old_text")
def remove_command(target: str, old_text: str) -> None:
    """Remove the one entry of TARGET holding OLD_TEXT (two matches remove nothing)."""
    if _memory_off():
        sys.exit(1)
    result = _with_memory(lambda selected: selected.apply("remove", target, old_text=old_text))
    text = "".join(str(block.get("text", "")) for block in result.content)
    if result.is_error:
        echo_shown(f"hermes: error: {text}", err=True)
        sys.exit(1)
    echo_shown(text)
