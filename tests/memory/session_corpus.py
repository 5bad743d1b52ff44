"""A corpus of stored sessions in the transcript format: 20 hand-written conversations, each
with the question a user would later ask about it, among fillers on the same everyday topics.
The benchmark builds its 10,000 sessions with it too."""

from __future__ import annotations

import random
from pathlib import Path

from hermes_core.agent import Message, TranscriptStore

TARGETS: list[tuple[str, list[str], str]] = [
    (
        "pg-upgrade",
        [
            "Upgrade our Postgres cluster from 14 to 16 with pg_upgrade",
            "Ran pg_upgrade --link; the replica needed a fresh basebackup afterwards",
        ],
        "how did we upgrade postgres with pg_upgrade",
    ),
    (
        "flaky-websocket",
        [
            "The websocket test is flaky in CI, it times out on reconnect",
            "Fixed: the heartbeat interval raced the reconnect backoff",
        ],
        "flaky websocket reconnect heartbeat",
    ),
    (
        "nginx-tls",
        [
            "Renew the TLS certificate on the nginx reverse proxy",
            "certbot renew failed because port 80 was closed by the firewall",
        ],
        "certbot nginx certificate renewal firewall",
    ),
    (
        "pandas-merge",
        [
            "The pandas merge duplicates rows for the invoices report",
            "The customer key was not unique; deduplicated before merge with validate='one_to_one'",
        ],
        "pandas merge duplicated invoice rows",
    ),
    (
        "k8s-oom",
        [
            "Our worker pods get OOMKilled in kubernetes",
            "Raised the memory limit to 2Gi and fixed the leak in the image resize cache",
        ],
        "kubernetes pods OOMKilled memory limit",
    ),
    (
        "rust-lifetimes",
        [
            "Borrow checker error: lifetime of the parser iterator does not live long enough",
            "Made the tokenizer own its buffer instead of borrowing the input string",
        ],
        "rust borrow checker lifetime tokenizer",
    ),
    (
        "terraform-state",
        [
            "terraform state lock stuck after a crashed apply",
            "Used terraform force-unlock with the lock id from the DynamoDB table",
        ],
        "terraform force-unlock dynamodb lock",
    ),
    (
        "react-rerender",
        [
            "The React dashboard re-renders on every keystroke",
            "Memoized the chart with useMemo and moved the filter state down",
        ],
        "react dashboard rerender usememo",
    ),
    (
        "git-bisect",
        [
            "Find which commit broke the PDF export",
            "git bisect found commit 4f2a1c: the font subsetting change",
        ],
        "git bisect pdf export font",
    ),
    (
        "redis-eviction",
        [
            "Redis evicts session keys under load",
            "Switched maxmemory-policy to volatile-lru and gave sessions a TTL",
        ],
        "redis maxmemory-policy eviction sessions",
    ),
    (
        "celery-retry",
        [
            "Celery tasks retry forever when the SMTP server is down",
            "Added max_retries=5 with exponential backoff and a dead-letter queue",
        ],
        "celery smtp retries backoff",
    ),
    (
        "docker-layers",
        [
            "The Docker image is 2 GB, builds are slow",
            "Multi-stage build, slim base image, and a .dockerignore for node_modules",
        ],
        "shrink docker image multi-stage dockerignore",
    ),
    (
        "unicode-csv",
        [
            "The CSV export garbles accented names in Excel",
            "Wrote it as UTF-8 with a BOM (utf-8-sig) so Excel detects the encoding",
        ],
        "csv excel accents utf-8 bom",
    ),
    (
        "cron-timezone",
        [
            "The nightly backup cron runs at the wrong hour",
            "The server was on UTC; set CRON_TZ=Europe/Paris in the crontab",
        ],
        "backup cron wrong hour timezone",
    ),
    (
        "oauth-redirect",
        [
            "OAuth login fails with redirect_uri_mismatch on staging",
            "Registered the staging callback URL in the Google console",
        ],
        "oauth redirect_uri_mismatch staging google",
    ),
    (
        "sqlite-locked",
        [
            "database is locked errors from sqlite under concurrent writes",
            "Enabled WAL journal mode and a busy_timeout of 5 seconds",
        ],
        "sqlite database is locked wal busy_timeout",
    ),
    (
        "mypy-generics",
        [
            "mypy complains about the generic repository class",
            "Bound the TypeVar to the Model protocol and used Self for the builders",
        ],
        "mypy typevar generic repository protocol",
    ),
    (
        "s3-costs",
        [
            "Our S3 bill doubled this month",
            "Old log objects had no lifecycle rule; added expiry after 30 days and moved "
            "archives to Glacier",
        ],
        "s3 bill lifecycle glacier logs",
    ),
    (
        "gpu-cuda",
        [
            "torch says CUDA is not available on the new GPU box",
            "The driver was 470; installed 535 and the matching CUDA 12 wheel",
        ],
        "cuda not available driver torch gpu",
    ),
    (
        "i18n-plurals",
        [
            "Plural forms are wrong in the Polish translation",
            "Used ngettext with the CLDR plural rules instead of count == 1",
        ],
        "polish plural ngettext translation",
    ),
]
"""(name, [user message, assistant answer], a later question about it)."""

_TOPICS = [
    "tests",
    "deploy",
    "database",
    "migration",
    "logging",
    "cache",
    "frontend",
    "api",
    "docs",
    "release",
    "config",
    "monitoring",
    "refactor",
    "review",
    "queue",
    "search",
    "auth",
    "build",
]
_VERBS = ["fix", "add", "update", "check", "speed up", "clean up", "document", "review", "debug"]
_THINGS = [
    "the login page",
    "the billing job",
    "the user settings",
    "the export",
    "the dashboard",
    "the import script",
    "the notification emails",
    "the admin panel",
    "the search results",
    "the upload form",
    "the report",
    "the onboarding flow",
    "the metrics",
    "the scheduler",
]


def filler(rng: random.Random) -> list[str]:
    """An everyday conversation on a random topic."""
    topic, verb, thing = rng.choice(_TOPICS), rng.choice(_VERBS), rng.choice(_THINGS)
    other = rng.choice(_TOPICS)
    return [
        f"Can you {verb} {thing}? It is about the {topic} and maybe the {other}.",
        f"Done: I had to {rng.choice(_VERBS)} {rng.choice(_THINGS)} and ran the {topic} checks.",
    ]


def write_corpus(directory: Path, total: int, *, seed: int = 7) -> dict[str, str]:
    """``total`` sessions in ``directory`` (transcripts as the loop writes them): the targets
    spread among fillers; the target's session id by its name."""
    rng = random.Random(seed)
    store = TranscriptStore(directory)
    spots = sorted(rng.sample(range(total), len(TARGETS)))
    targets = dict(zip(spots, TARGETS, strict=True))
    ids: dict[str, str] = {}
    for number in range(total):
        session = f"s{number:05d}"
        transcript = store.open(session)
        transcript.start(session, model="fake-1")
        target = targets.get(number)
        user, answer = filler(rng) if target is None else target[1]
        if target is not None:
            ids[target[0]] = session
        transcript.add(Message("user", user))
        transcript.add(Message("assistant", answer))
    return ids
