"""Which English words of tool names the multilingual lexicon should translate: each word of the
tool names of two catalogs no dev set was written from (the MCP servers of
``shared/data/livemcpbench_tools`` and the APIs of ``shared/data/saas_openapi_catalog``), with
the number of servers whose tool names hold it, most first, and whether
``plugins_builtin/bm25/lexicon.py`` has it.

The lexicon holds the words of at least five of the 92 servers (``--servers 5``) but these, left
out on purpose: English function words and HTTP verbs (``from``, ``with``, ``for``, ``and``,
``all``, ``post``, ``put``, ``patch``); words of no one meaning or written alike in every
language (``info``, ``detail``, ``data``, ``type``, ``name``, ``new``, ``default``,
``available``, ``usage``, ``custom``, ``auto``, ``bulk``, ``batch``, ``block``, ``stream``,
``tree``, ``url``, ``pdf``, ``markdown``, ``webhook``, ``config``, ``app``); and actions whose
words another entry already holds (``add`` under create, ``remove`` under delete, ``read`` and
``fetch`` under get, ``set`` under settings, ``find`` under search, ``change`` and ``edit``
under update).

    python benchmarks/lexicon_vocabulary.py [--servers 5]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"


def name_words(name: str) -> set[str]:
    """The words of a tool name (camelCase, snake_case, kebab-case), lowercased, a plural's
    ``s`` dropped (``statuses`` is ``status``)."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", name).lower()
    return {singular(word) for word in re.split(r"[^a-z]+", spaced) if len(word) > 2}


def singular(word: str) -> str:
    """``word`` without a plural's ``s``."""
    if word.endswith("uses"):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us")):
        return word[:-1]
    return word


def servers_by_word() -> dict[str, set[str]]:
    """Each word of a tool name, with the servers (``L:`` livemcpbench, ``S:`` SaaS) whose tools
    use it."""
    found: dict[str, set[str]] = defaultdict(set)
    for entry in json.loads((SHARED / "livemcpbench_tools" / "tools.json").read_text("utf-8")):
        for server, listing in entry.get("tools", {}).items():
            for tool in listing.get("tools", []):
                for word in name_words(tool["name"]):
                    found[word].add(f"L:{server}")
    saas = json.loads((SHARED / "saas_openapi_catalog" / "catalog.json").read_text("utf-8"))
    tools = saas if isinstance(saas, list) else saas.get("tools", saas)
    for tool in tools.values() if isinstance(tools, dict) else tools:
        for word in name_words(tool["name"].split("__")[-1]):
            found[word].add(f"S:{tool['server']}")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=int, default=5, help="at least this many servers")
    least = parser.parse_args().servers
    sys.path.insert(0, str(REPO))
    from plugins_builtin.bm25.lexicon import ACTION_WORDS

    translated = {singular(word) for word in ACTION_WORDS}
    found = servers_by_word()
    print(f"{len(set().union(*found.values()))} servers")
    for word, servers in sorted(found.items(), key=lambda item: (-len(item[1]), item[0])):
        if len(servers) < least:
            break
        held = "in the lexicon" if word in translated else ""
        print(f"{word:16} {len(servers):3}  {held}")


if __name__ == "__main__":
    main()
