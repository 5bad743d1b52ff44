"""The plugin as a user meets it, through the real ``hermes`` command: installed but not
enabled, then enabled and selected, and a model whose weights or tokenizer were changed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from hermes_search_hybrid.checksum import TOKENIZER_FILE, TOKENIZER_SHA256
from hermes_search_hybrid.model import WEIGHTS_FILE, default_model_dir
from hybrid_fixtures import MISMATCH_QUERY, hybrid_config, write_catalog

from hermes_core.testing import HermesCli


def test_installed_plugin_is_listed_as_not_enabled(hermes_cli: HermesCli) -> None:
    rows = [row for row in hermes_cli.json("plugins", "list", "--json") if row["name"] == "hybrid"]

    assert [(row["source"], row["status"]) for row in rows] == [("pip", "not enabled")]


def test_enabled_and_selected_plugin_answers_tools_search(hermes_cli: HermesCli) -> None:
    catalog = write_catalog(hermes_cli.work / "catalog.json")
    catalogs = {"catalogs": [{"path": str(catalog)}]}
    bm25 = {"tools": {**catalogs, "tool_search": {"admission": "off"}}}
    hermes_cli.config.write_text(json.dumps(bm25), encoding="utf-8")
    lexical = hermes_cli.json("tools", "search", MISMATCH_QUERY, "--json")

    config = hybrid_config()
    config["tools"].update(catalogs)
    hermes_cli.config.write_text(json.dumps(config), encoding="utf-8")
    hybrid = hermes_cli.json("tools", "search", MISMATCH_QUERY, "--json")

    assert lexical["results"][0]["matches"] == []
    assert hybrid["results"][0]["matches"][0] == "send_sms"


def changed_model(hermes_cli: HermesCli, tmp_path: Path, changed: str = WEIGHTS_FILE) -> Path:
    """A copy of the model with one byte of its file ``changed`` changed, selected in the
    config."""
    model = shutil.copytree(default_model_dir(), tmp_path / "model")
    weights = model / changed
    data = bytearray(weights.read_bytes())
    data[len(data) // 2] ^= 0x01
    weights.write_bytes(bytes(data))
    hermes_cli.config.write_text(
        json.dumps(hybrid_config({"model_dir": str(model)})), encoding="utf-8"
    )
    return weights


def test_model_whose_weights_differ_from_upstream_is_refused(
    hermes_cli: HermesCli, tmp_path: Path
) -> None:
    weights = changed_model(hermes_cli, tmp_path)

    done = hermes_cli.run("tools", "search", "send a text", ok=False)

    assert done.returncode == 2
    assert f"refusing to load {weights}: its sha256 is " in done.stderr
    assert "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db" in done.stderr
    assert "Traceback" not in done.stderr


# `hermes plugins list` in this process, reporting at exit which modules it imported.
LIST_AND_REPORT = """
import atexit, json, sys
atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.stderr))
sys.argv = ["hermes", "plugins", "list"]
from hermes_core._cli import main
main()
"""


def test_listing_the_enabled_plugin_imports_neither_onnxruntime_nor_the_model(
    hermes_cli: HermesCli,
) -> None:
    hermes_cli.config.write_text(json.dumps(hybrid_config()), encoding="utf-8")

    done = subprocess.run(
        [sys.executable, "-c", LIST_AND_REPORT],
        cwd=hermes_cli.work,
        env=hermes_cli.variables(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    imported = set(json.loads(done.stderr.splitlines()[-1]))
    assert "hybrid" in done.stdout
    assert "hermes_search_hybrid" in imported
    # The factory runs (a failure would be listed as the plugin's error): it builds the bm25
    # side, which uses numpy; onnxruntime and the model wait for the first search.
    assert not {"onnxruntime", "tokenizers", "torch", "sentence_transformers"} & imported


def test_model_whose_tokenizer_differs_from_upstream_is_refused(
    hermes_cli: HermesCli, tmp_path: Path
) -> None:
    tokenizer = changed_model(hermes_cli, tmp_path, TOKENIZER_FILE)

    done = hermes_cli.run("tools", "search", "send a text", ok=False)

    assert done.returncode == 2
    assert f"refusing to load {tokenizer}: its sha256 is " in done.stderr
    assert TOKENIZER_SHA256 in done.stderr


def test_model_whose_weights_differ_is_listed_as_the_plugins_error(
    hermes_cli: HermesCli, tmp_path: Path
) -> None:
    changed_model(hermes_cli, tmp_path)

    # docs/cli.md's rule for list commands: every row shown, then exit 1 for a broken one.
    rows = hermes_cli.json("plugins", "list", "--json", exit_code=1)

    (row,) = [row for row in rows if row["name"] == "hybrid"]
    assert row["status"] == "error"
    assert "refusing to load" in row["error"]


def test_hermes_tools_search_on_a_terminal_shows_the_first_embeddings_progress(
    hermes_cli: HermesCli,
) -> None:
    """Issue 32: "first embedding shows progress on a terminal", through the command a user
    runs (nothing between the backend and the terminal may swallow stderr)."""
    import pexpect
    from hermes_search_hybrid.backend import PROGRESS_MIN_TOOLS

    count = PROGRESS_MIN_TOOLS
    tools = [
        {"name": f"job_{i}", "description": f"Does job {i}.", "server": "jobs"}
        for i in range(count)
    ]
    catalog = hermes_cli.work / "jobs.json"
    catalog.write_text(json.dumps(tools), encoding="utf-8")
    config = hybrid_config()
    config["tools"]["catalogs"] = [{"path": str(catalog), "server": "jobs"}]
    hermes_cli.config.write_text(json.dumps(config), encoding="utf-8")
    command = hermes_cli.command("tools", "search", "job 7")
    terminal = pexpect.spawn(
        command[0],
        command[1:],
        env=hermes_cli.variables(),
        cwd=str(hermes_cli.work),
        encoding="utf-8",
        timeout=300,
    )
    # The catalog's tools and the host's own deferred ones, all of them embedded once.
    terminal.expect(r"hybrid: embedding tools: .*?(\d+)/(\d+) ")
    done, total = (int(group) for group in terminal.match.groups())
    while done < total:
        terminal.expect(r"(\d+)/(\d+) ")
        done, total = (int(group) for group in terminal.match.groups())
    assert total >= count
    terminal.expect("job_7")
    terminal.expect(pexpect.EOF)
