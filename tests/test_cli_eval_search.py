"""``hermes eval search`` scores every query: one tool_search refuses (over the bridge's 2,000
characters, as BFCL has one of 4,739) is scored as the model gets it, counted, and the run goes
on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_core.search._bridge import MAX_QUERY_CHARS
from hermes_core.testing._cli_in_process import InProcessCli


@pytest.fixture
def hermes_cli(hermes_home: Path, hermes_project: Path, tmp_path: Path) -> InProcessCli:
    return InProcessCli(tmp_path, home=hermes_home, work=hermes_project)


LONG_QUERY = "what time is it in " + "the city of Lisbon, " * 240


def _eval_files(folder: Path) -> tuple[Path, Path]:
    catalog = folder / "catalog.json"
    catalog.write_text(
        json.dumps(
            [
                {"name": "get_current_time", "description": "Current time in a time zone."},
                {"name": "convert_time", "description": "Convert a time between zones."},
            ]
        ),
        encoding="utf-8",
    )
    assert len(LONG_QUERY) > MAX_QUERY_CHARS
    lines = [
        {"query": "current time", "relevant": ["get_current_time"]},
        {"query": LONG_QUERY, "relevant": ["get_current_time"]},
        {"query": "convert time zone", "relevant": ["convert_time"]},
    ]
    queries = folder / "queries.jsonl"
    queries.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return catalog, queries


def test_a_query_the_bridge_refuses_is_scored_as_no_match_counted_and_the_run_goes_on(
    hermes_cli: InProcessCli, tmp_path: Path
) -> None:
    catalog, queries = _eval_files(tmp_path)
    args = ("eval", "search", "--catalog", str(catalog), "--queries", str(queries))

    result = hermes_cli.run(*args, "--json")

    report = json.loads(result.stdout)
    assert report["queries"] == 3
    assert report["refused"] == 1
    assert report["hit@1"] == pytest.approx(66.67)  # the refused one finds nothing
    assert report["no_match_rate"] == pytest.approx(33.33)
    assert "tool_search refused 1 queries, scored as no match" in result.stderr
    assert f"query 2: a query of {len(LONG_QUERY.strip()):,} characters was sent" in result.stderr


def test_the_sets_table_has_a_refused_column(hermes_cli: InProcessCli, tmp_path: Path) -> None:
    catalog, queries = _eval_files(tmp_path)
    sets = tmp_path / "sets.json"
    sets.write_text(
        json.dumps([{"name": "clock", "catalog": catalog.name, "queries": queries.name}]),
        encoding="utf-8",
    )

    header, row = hermes_cli.run("eval", "search", "--sets", str(sets)).stdout.splitlines()

    assert dict(zip(header.split(), row.split(), strict=True))["refused"] == "1"


def test_a_relevant_tool_missing_from_the_catalog_is_an_error_naming_the_line(
    hermes_cli: InProcessCli, tmp_path: Path
) -> None:
    catalog, _ = _eval_files(tmp_path)
    queries = tmp_path / "typo.jsonl"
    lines = [
        {"query": "current time", "relevant": ["get_current_time"]},
        {"query": "convert time zone", "relevant": ["convert_tim"]},
    ]
    queries.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")

    result = hermes_cli.run(
        "eval", "search", "--catalog", str(catalog), "--queries", str(queries), ok=False
    )

    assert result.returncode == 2
    assert result.stdout == ""  # no figures: every recall would have been capped by the typo
    assert (
        f"hermes: error: {queries}:2: relevant tool 'convert_tim' is not in the catalog "
        f"{catalog}. Did you mean 'convert_time'?"
    ) in result.stderr


def test_a_queries_file_without_queries_is_an_error(
    hermes_cli: InProcessCli, tmp_path: Path
) -> None:
    catalog, _ = _eval_files(tmp_path)
    queries = tmp_path / "empty.jsonl"
    queries.write_text("\n", encoding="utf-8")

    result = hermes_cli.run(
        "eval", "search", "--catalog", str(catalog), "--queries", str(queries), ok=False
    )

    assert result.returncode == 2
    assert result.stdout == ""
    assert f"hermes: error: {queries}: no queries" in result.stderr


def test_eval_search_runs_none_of_the_users_hooks_and_writes_no_activity_log(
    hermes_cli: InProcessCli, tmp_path: Path
) -> None:
    # A measurement, not the user's calls: a post_tool_call hook that logs or notifies would
    # fire once a query (and its time would count in p50_ms), a hook that blocks would score
    # every query as refused, and the activity log would fill with the eval's queries.
    marker = tmp_path / "hooks-ran.txt"
    hook = hermes_cli.home / "hooks" / "blocker"
    hook.mkdir(parents=True)
    (hook / "HOOK.yaml").write_text("event: pre_tool_call\n", encoding="utf-8")
    (hook / "handler.py").write_text(
        "def handle(event):\n    return {'action': 'block', 'message': 'blocked'}\n",
        encoding="utf-8",
    )
    hermes_cli.config.write_text(
        "hooks:\n"
        "  enabled: [blocker]\n"
        "  pre_tool_call:\n"
        f"    - command: 'cat >/dev/null; echo pre >> {marker}'\n"
        "  post_tool_call:\n"
        f"    - command: 'cat >/dev/null; echo post >> {marker}'\n",
        encoding="utf-8",
    )
    catalog, queries = _eval_files(tmp_path)

    result = hermes_cli.run(
        "eval", "search", "--catalog", str(catalog), "--queries", str(queries), "--json"
    )

    report = json.loads(result.stdout)
    assert report["refused"] == 1  # only the query over 2,000 characters, not a blocked one
    assert report["hit@1"] == pytest.approx(66.67)
    assert not marker.exists(), marker.read_text(encoding="utf-8")
    assert not (hermes_cli.log_dir / "activity.jsonl").exists()


def test_a_set_whose_files_are_missing_is_an_error_naming_the_set_before_any_set_runs(
    hermes_cli: InProcessCli, tmp_path: Path
) -> None:
    # The README's `--sets benchmarks/data/sets.json` in a clone without ../shared/data: the
    # error must say which set of which file wants what, not only a path, and come before the
    # sets that can run have been measured for nothing.
    catalog, queries = _eval_files(tmp_path)
    sets = tmp_path / "sets.json"
    sets.write_text(
        json.dumps(
            [
                {"name": "clock", "catalog": catalog.name, "queries": queries.name},
                {"name": "saas", "catalog": "../shared/catalog.json", "queries": queries.name},
            ]
        ),
        encoding="utf-8",
    )

    result = hermes_cli.run("eval", "search", "--sets", str(sets), ok=False)

    assert result.returncode == 2
    assert result.stdout == ""
    assert "clock:" not in result.stderr  # its run's warning: it was not measured
    missing = (tmp_path / "../shared/catalog.json").resolve()
    assert (
        f"hermes: error: {sets}: entry 1 (set 'saas'): field 'catalog': "
        f"../shared/catalog.json is not there ({missing}: no such file)"
    ) in result.stderr


def test_a_warning_of_one_set_names_its_queries_file_when_given_in_the_working_directory(
    hermes_cli: InProcessCli,
) -> None:
    # --catalog/--queries have no set name; the folder's name was used, empty for a file in
    # the working directory: "hermes: warning: : tool_search refused ...".
    _eval_files(hermes_cli.work)

    result = hermes_cli.run(
        "eval", "search", "--catalog", "catalog.json", "--queries", "queries.jsonl", "--json"
    )

    assert "hermes: warning: queries.jsonl: tool_search refused 1 queries" in result.stderr
