"""``hermes eval search``: search quality and latency over a labelled query set."""

from __future__ import annotations

import json
import sys
import time
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from hermes_core.cli.context import environment, load_config_in_effect
from hermes_core.cli.output import columns

if TYPE_CHECKING:
    from hermes_core.config import Config
    from hermes_core.host import Host
    from hermes_core.search.evaluation import EvalQuery


@click.group("eval")
def eval_group() -> None:
    """Measure hermes-core against labelled data."""


@eval_group.command("search")
@click.option(
    "--catalog",
    "catalog_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="JSON array of {name, description, input_schema?, server?}.",
)
@click.option(
    "--queries",
    "queries_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help='JSON Lines of {"query": ..., "relevant": [names]}.',
)
@click.option("--k", default=5, show_default=True, type=click.IntRange(1, 50), help="Recall cut.")
@click.option(
    "--admission",
    type=click.Choice(["strict", "lenient", "off"]),
    help="Override tools.tool_search.admission.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the metrics as JSON.")
def search_command(
    catalog_path: Path, queries_path: Path, k: int, admission: str | None, as_json: bool
) -> None:
    """Load a catalog as deferred tools and run every query through the real tool_search.

    Reports recall@1/5/10 (and recall@K), nDCG@10, MRR, the share of queries with no match and
    the search latency p50/p99, in percent (0-100) and milliseconds. Each query asks for
    max(K, 10) hits, one model turn per query.
    """
    import anyio

    from hermes_core.host import Host
    from hermes_core.search.evaluation import (
        METRIC_KEYS,
        load_queries,
        recall_at,
        score_rankings,
    )

    env = environment()
    config = _eval_config(load_config_in_effect(env), catalog_path, admission)
    queries = load_queries(queries_path)
    depth = max(k, 10)
    show_progress = not as_json and sys.stderr.isatty()

    async def main() -> dict[str, float | int]:
        async with Host(config, env) as host:
            host.prepare_tools()
            with _progress(len(queries), enabled=show_progress) as bar:
                rankings, latencies = await _run_queries(host, queries, depth, bar)
            tools = sum(1 for tool in host.registry if tool.source == "catalog")
        metrics = score_rankings(queries, rankings, tools=tools, latencies_ms=latencies)
        if k not in (1, 5, 10):
            metrics[f"recall@{k}"] = recall_at(k, queries, rankings)
        return metrics

    metrics = anyio.run(main)
    if as_json:
        ordered: dict[str, Any] = {key: metrics[key] for key in METRIC_KEYS}
        ordered.update({key: value for key, value in metrics.items() if key not in ordered})
        click.echo(json.dumps(ordered, indent=2))
        return
    click.echo(columns([(f"{key}:", f"{value}") for key, value in metrics.items()]))


def _eval_config(config: Config, catalog_path: Path, admission: str | None) -> Config:
    """The user's configuration with the catalog as the only catalog toolset (and the admission
    override), validated again."""
    data = config.model_dump()
    data["tools"]["catalogs"] = [{"path": str(catalog_path.resolve())}]
    if admission is not None:
        data["tools"]["tool_search"]["admission"] = admission
    return type(config).model_validate(data)


async def _run_queries(
    host: Host, queries: list[EvalQuery], depth: int, bar: Any
) -> tuple[list[list[str]], list[float]]:
    session = host.new_session()
    rankings: list[list[str]] = []
    latencies: list[float] = []
    for item in queries:
        session.next_turn()  # one search per turn: the loop breaker counts per turn
        started = time.perf_counter()
        result = await host.dispatch(
            "tool_search", {"queries": [item.query], "limit": depth}, session
        )
        latencies.append((time.perf_counter() - started) * 1000.0)
        if result.is_error or not isinstance(result.structured, dict):
            raise click.ClickException(f"tool_search failed: {result.text_content}")
        rankings.append(list(result.structured["results"][0]["matches"]))
        bar.update(1)
    return rankings, latencies


class _NoProgress:
    def update(self, steps: int) -> None:
        return None


def _progress(total: int, *, enabled: bool) -> Any:
    if enabled:
        return click.progressbar(length=total, label="searching", file=sys.stderr)
    return nullcontext(_NoProgress())
