"""Shadowing and the impostor guard: which copy of each plugin name takes part."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from hermes_core._plugins.candidates import SOURCES, Candidate, Discovery
from hermes_core._plugins.manifest import normalize_name


@dataclass
class Resolution:
    """The outcome of resolving discovered candidates.

    ``winners`` maps each name to the copy from the highest-precedence source; ``shadowed`` maps
    a name to the copies it beat (lowest precedence first); ``gated`` holds project copies kept
    out because project plugins are not enabled (they shadow nothing); ``warnings`` says what was
    ignored and why.
    """

    winners: dict[str, Candidate] = field(default_factory=dict)
    shadowed: dict[str, list[Candidate]] = field(default_factory=dict)
    gated: list[Candidate] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def resolve(discovery: Discovery) -> Resolution:
    """Pick one copy per name: the later source wins, the others are recorded as shadowed.

    A user or project plugin claiming a bundled plugin's name from a directory of a different
    name is an impostor and is ignored with a warning; overriding a built-in means using the
    built-in's directory name too. Within one source, the first directory (by name) keeps a
    name and later claims are ignored with a warning; but two pip distributions with one
    entry-point name make that plugin an ``error`` naming both, since the order Python lists
    them in is no choice of the user's.
    """
    result = Resolution(warnings=list(discovery.warnings))
    bundled = {c.name for c in discovery.candidates if c.source == "bundled"}
    seen: dict[tuple[str, str], Candidate] = {}
    order = {source: index for index, source in enumerate(SOURCES)}
    clashes: dict[str, list[Candidate]] = {}
    for candidate in sorted(discovery.candidates, key=lambda c: order[c.source]):
        if _is_impostor(candidate, bundled):
            result.warnings.append(
                f"{candidate.source} plugin at {candidate.directory} claims the bundled name "
                f"{candidate.name!r} from a directory of another name: ignored (to override a "
                f"bundled plugin, name its directory {candidate.name!r})"
            )
            continue
        first = seen.get((candidate.source, candidate.name))
        if first is not None and candidate.source == "pip":
            clashes.setdefault(candidate.name, [first]).append(candidate)
            continue
        if first is not None:
            result.warnings.append(
                f"{candidate.source} plugin {candidate.name!r} at {candidate.path} is ignored: "
                f"the name is already taken by {first.path}"
            )
            continue
        seen[(candidate.source, candidate.name)] = candidate
        if candidate.source == "project" and not discovery.project_enabled:
            result.gated.append(candidate)
            continue
        previous = result.winners.get(candidate.name)
        if previous is not None:
            result.shadowed.setdefault(candidate.name, []).append(previous)
        result.winners[candidate.name] = candidate
    for name, providers in clashes.items():
        _mark_clash(result, name, providers)
    return result


def _mark_clash(result: Resolution, name: str, providers: list[Candidate]) -> None:
    """Replace the pip copy of ``name`` that was kept by an error naming every provider."""
    kept = providers[0]
    listed = " and ".join(c.distribution or str(c.path) for c in providers)
    failed = replace(
        kept,
        error=f"several installed distributions provide the entry point {name!r}: {listed}; "
        "uninstall all but one of them",
    )
    if result.winners.get(name) is kept:
        result.winners[name] = failed
    losers = result.shadowed.get(name, [])
    result.shadowed[name] = [failed if loser is kept else loser for loser in losers]
    if not result.shadowed[name]:
        del result.shadowed[name]


def _is_impostor(candidate: Candidate, bundled: set[str]) -> bool:
    if candidate.source not in ("user", "project") or candidate.directory is None:
        return False
    if candidate.manifest is None:
        return False
    return candidate.name in bundled and normalize_name(candidate.directory.name) != candidate.name
