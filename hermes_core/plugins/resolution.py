"""Shadowing and the impostor guard: which copy of each plugin name takes part."""

from __future__ import annotations

from dataclasses import dataclass, field

from hermes_core.plugins.discovery import SOURCES, Candidate, Discovery
from hermes_core.plugins.manifest import normalize_name


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
    name and later claims are ignored with a warning.
    """
    result = Resolution(warnings=list(discovery.warnings))
    bundled = {c.name for c in discovery.candidates if c.source == "bundled"}
    seen: dict[tuple[str, str], Candidate] = {}
    order = {source: index for index, source in enumerate(SOURCES)}
    for candidate in sorted(discovery.candidates, key=lambda c: order[c.source]):
        if _is_impostor(candidate, bundled):
            result.warnings.append(
                f"{candidate.source} plugin at {candidate.directory} claims the bundled name "
                f"{candidate.name!r} from a directory of another name: ignored (to override a "
                f"bundled plugin, name its directory {candidate.name!r})"
            )
            continue
        first = seen.get((candidate.source, candidate.name))
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
    return result


def _is_impostor(candidate: Candidate, bundled: set[str]) -> bool:
    if candidate.source not in ("user", "project") or candidate.directory is None:
        return False
    if candidate.manifest is None:
        return False
    return candidate.name in bundled and normalize_name(candidate.directory.name) != candidate.name
