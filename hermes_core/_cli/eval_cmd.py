"""``hermes eval search``: search quality and latency over labelled query sets."""

from __future__ import annotations

import json
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from hermes_core._cli.context import environment, load_config_in_effect
from hermes_core._cli.output import columns, echo_shown

if TYPE_CHECKING:
    from hermes_core._cli.progress import CallProgressLine
    from hermes_core._config import Config
    from hermes_core._host import Host
    from hermes_core._paths import Environment
    from hermes_core.search._evaluation import EvalQuery, EvalSet

_TABLE_COLUMNS = (
    "recall@5",
    "hit@1",
    "hit@5",
    "ndcg@10",
    "mrr",
    "no_match_rate",
    "negatives_no_match",
    "negatives_flagged",
    "refused",
    "p50_ms",
)


@click.group("eval")
def eval_group() -> None:
    """Measure hermes-core against labelled data."""


@eval_group.command("search")
@click.option(
    "--catalog",
    "catalog_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="JSON array of {name, description, input_schema?, server?}.",
)
@click.option(
    "--queries",
    "queries_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help='JSON Lines of {"query": ..., "relevant": [names]} (or "negative": true).',
)
@click.option(
    "--sets",
    "sets_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="JSON array of {name, catalog, queries} (paths relative to it): one row a set.",
)
@click.option("--k", default=5, show_default=True, type=click.IntRange(1, 50), help="Recall cut.")
@click.option(
    "--admission",
    type=click.Choice(["strict", "lenient", "off"]),
    help="Override tools.tool_search.admission.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the metrics as JSON.")
def search_command(
    catalog_path: Path | None,
    queries_path: Path | None,
    sets_path: Path | None,
    k: int,
    admission: str | None,
    as_json: bool,
) -> None:
    """Load a catalog as deferred tools and run every query through the real tool_search.

    Give --catalog and --queries for one set, or --sets for several (then a table, one row a
    set). Reports, over the queries with relevant tools, recall@1/5/10 (and recall@K), hit@1/5
    (a relevant tool in the top k), nDCG@10, MRR and the share with no match; over the negative
    queries ("negative": true), the share answered with no match and the share flagged (no
    match, or their "absent" words among "unmatched"); and the search latency p50/p99. Rates
    are percentages (0-100). A query tool_search refuses (one over its 2,000 characters) is
    scored as the model would get it, no match, and counted under "refused". Each query asks
    for max(K, 10) hits (a negative one for tools.tool_search.search_default_limit, what a
    model gets), one model turn per query.
    Catalog entries named like a bridge tool are skipped with one warning.
    """
    from hermes_core.search._evaluation import EvalSet, load_sets

    if sets_path is not None:
        if catalog_path is not None or queries_path is not None:
            raise click.UsageError("give either --sets or --catalog and --queries, not both")
        sets = load_sets(sets_path)
    elif catalog_path is None or queries_path is None:
        raise click.UsageError("give --catalog and --queries, or --sets")
    else:
        # No set name: its warnings and progress line name the queries file as given.
        sets = [EvalSet(str(queries_path), catalog_path, queries_path)]
    env = environment()
    config = _eval_config(load_config_in_effect(env), admission)
    show_progress = not as_json and sys.stderr.isatty()
    with tempfile.TemporaryDirectory(prefix="hermes-eval-logs-") as logs:
        # Its queries are a measurement, not calls of the user's: the activity log they would
        # fill (a thousand lines a --sets run) is a temporary one, gone with the run.
        eval_env = replace(env, variables={**env.variables, "HERMES_LOG_DIR": logs})
        results = {
            item.name: _evaluate_set(eval_env, config, item, k, show_progress=show_progress)
            for item in sets
        }
    if sets_path is None:
        (metrics,) = results.values()
        if as_json:
            click.echo(json.dumps(metrics, indent=2))
        else:
            click.echo(columns([(f"{key}:", f"{value}") for key, value in metrics.items()]))
        return
    if as_json:
        click.echo(json.dumps(results, indent=2))
        return
    header = ["set", "queries", "negatives", "tools", *_TABLE_COLUMNS]
    rows = [
        [name, *(str(metrics[key]) for key in ("queries", "negatives", "tools", *_TABLE_COLUMNS))]
        for name, metrics in results.items()
    ]
    click.echo(columns([header, *rows], free=()))  # numbers: never cut


def _evaluate_set(
    env: Environment, config: Config, item: EvalSet, k: int, *, show_progress: bool
) -> dict[str, Any]:
    """The metrics of one set, in the order of ``METRIC_KEYS`` (plus ``recall@K``)."""
    import anyio

    from hermes_core._cli.host_runs import cli_host
    from hermes_core._plugins.selection import UnavailableSearchBackend
    from hermes_core.search._catalog import load_catalog
    from hermes_core.search._evaluation import (
        METRIC_KEYS,
        check_relevant,
        load_queries,
        recall_at,
        score_rankings,
    )

    reserved: list[str] = []
    catalog = load_catalog(item.catalog.resolve(), on_reserved=reserved.append)
    if reserved:
        echo_shown(  # a catalog's names: text from outside
            f"hermes: warning: {item.catalog}: skipped {len(reserved)} catalog entries named "
            f"like a bridge tool ({', '.join(reserved)})",
            err=True,
        )
    queries = load_queries(item.queries)
    check_relevant(
        queries,
        [tool.name for tool in catalog],
        queries_path=item.queries,
        catalog_path=item.catalog,
    )
    depth = max(k, 10)

    async def main() -> dict[str, float | int]:
        with cli_host(config, env) as built:
            async with built as host:
                # A backend that cannot be built would answer every query with an error, scored as
                # no match: a row of zeros that measures nothing. Tool Search's own backend, the
                # one the queries use, is built first and its error raised (a second instance
                # would cost its factory again: the hybrid backend checks its model's weights).
                backend = host.tool_search.backend
                if isinstance(backend, UnavailableSearchBackend):
                    raise backend.error
                host.registry.register_all(catalog, owner="catalog")
                host.prepare_tools()
                line = _progress_line(show_progress)
                try:
                    run = await _run_queries(host, queries, depth, _Counter(item.name, line))
                finally:
                    if line is not None:
                        line.close()
        metrics = score_rankings(
            queries, run.rankings, tools=len(catalog), latencies_ms=run.latencies,
            unmatched=run.unmatched,
        )  # fmt: skip
        if k not in (1, 5, 10):
            metrics[f"recall@{k}"] = recall_at(k, queries, run.rankings)
        metrics["refused"] = len(run.refusals)
        if run.refusals:
            echo_shown(  # the refusal quotes the query
                f"hermes: warning: {item.name}: tool_search refused {len(run.refusals)} "
                f"queries, scored as no match (the first: {run.refusals[0]})",
                err=True,
            )
        return metrics

    metrics = anyio.run(main)
    ordered: dict[str, Any] = {key: metrics[key] for key in METRIC_KEYS}
    ordered.update({key: value for key, value in metrics.items() if key not in ordered})
    return ordered


def _eval_config(config: Config, admission: str | None) -> Config:
    """The user's configuration (its search backend, plugins and search settings) without its
    own tools: no catalog toolsets (the eval catalog is the only one), no MCP servers (none is
    started, and no tool of theirs ranks among the catalog's or collides with a name of it) and
    connectors off; without its shell hooks and hook directories (a hook would run once a
    query, its time counted as the search's, and one that blocks would score every query as
    refused); with the admission override, validated again."""
    data = config.model_dump()
    data["tools"]["catalogs"] = []
    data["mcp_servers"] = {}
    data["hooks"] = {}
    data["tools"]["connectors"]["enabled"] = False
    if admission is not None:
        data["tools"]["tool_search"]["admission"] = admission
    return type(config).model_validate(data)


@dataclass
class _Run:
    """What tool_search answered each query: the ranked names and unmatched words (none for a
    refused query), the latencies, and each refusal's message with the query's number."""

    rankings: list[list[str]] = field(default_factory=list)
    unmatched: list[list[str]] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)


async def _run_queries(host: Host, queries: list[EvalQuery], depth: int, counter: _Counter) -> _Run:
    session = host.new_session()
    run = _Run()
    for number, item in enumerate(queries, 1):
        session.next_turn()  # one search per turn: the loop breaker counts per turn
        started = time.perf_counter()
        # A negative is asked what a model asks by default: are the hits it sees flagged?
        limit = host.config.tools.tool_search.search_default_limit if item.negative else depth
        result = await host.dispatch(
            "tool_search", {"queries": [item.query], "limit": limit}, session
        )
        run.latencies.append((time.perf_counter() - started) * 1000.0)
        answers = result.structured.get("results") if isinstance(result.structured, dict) else None
        if result.is_error or not answers:
            # What a model gets for it: an error, no tool. Scored so, never the end of the run.
            message = result.error_message or result.text_content
            run.refusals.append(f"query {number}: {message[:300]}")
            run.rankings.append([])
            run.unmatched.append([])
        else:
            run.rankings.append(list(answers[0]["matches"]))
            run.unmatched.append(list(answers[0].get("unmatched", ())))
        counter.done(number, len(queries))
    return run


def _progress_line(enabled: bool) -> CallProgressLine | None:
    """The progress line on stderr when ``enabled`` and stderr is a terminal, else ``None``."""
    from hermes_core._cli.progress import call_progress_line

    return call_progress_line() if enabled else None


class _Counter:
    """The queries of one set done so far, drawn on ``line`` (``None``: nothing is drawn) as
    ``[####....] 52/261 queries (label), about 2 s left``."""

    def __init__(self, label: str, line: CallProgressLine | None) -> None:
        self.label = label
        self.line = line
        self.started = time.monotonic()

    def done(self, number: int, total: int) -> None:
        """``number`` of ``total`` queries are scored."""
        if self.line is None:
            return
        from hermes_core._progress import ProgressReport
        from hermes_core._shown import duration

        left = (time.monotonic() - self.started) / number * (total - number)
        eta = f", about {duration(left)} left" if number < total and left >= 1 else ""
        self.line(ProgressReport(number, total, f"queries ({self.label}){eta}"))
