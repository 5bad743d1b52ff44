"""When a cron job runs: its schedule, read from the text a person or a model gave.

Three forms (:func:`parse_schedule`):

- a cron expression, five fields (``*/15 9-17 * * 1-5``), in the machine's local time and its
  rules of daylight saving time (:func:`_local_zone`); parsed by ``croniter`` (the ``cron``
  install extra), never by hand;
- an interval, ``every 30m`` (``s``, ``m``, ``h``, ``d``; at least one second, at most
  :data:`MAX_INTERVAL_DAYS` days), the first run one interval after the job is created;
- one shot, an ISO 8601 time (``2026-12-24T09:00``, local time unless it names its zone), which
  must be in the future.

A schedule is refused when it never comes (``0 9 31 2 *``, 31 February) or when its time cannot
be written as a date (past the year 9999): such a job would never run, and its listing could not
show its next time.

The rule for missed runs is here, in one place (:meth:`Schedule.following`): a job whose time
came while no daemon ran (or while its previous run was still going) runs **once**, as soon as a
daemon sees it; the times missed in between are skipped, never caught up, and its next time is
the schedule's first time after now. An interval keeps its grid (created + k x interval).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import Final, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from hermes_core._errors import HermesError

_UNITS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86400}
MAX_INTERVAL_DAYS: Final = 36_500
"""The longest interval (a hundred years): a job's next time stays a date a listing can show."""
_INTERVAL: Final = re.compile(r"every\s+(\d+)\s*([smhd])", re.IGNORECASE)
FORMS: Final = (
    "a cron expression of five fields ('*/15 * * * *'), an interval ('every 30m': s, m, h or "
    "d), or one time in ISO 8601 ('2026-12-24T09:00')"
)
"""The forms a schedule may take, as error messages name them."""
MAX_SCHEDULE: Final = 500
"""The longest schedule text. A five-field expression listing every value of each field once
is 358 characters; croniter's time grows with the length (600,000 characters: 2 s at creation
and again at each run), and a refusal quotes the text."""


class JobError(HermesError, ValueError):
    """A job's field that cannot be used: ``field`` names it (``schedule``, ``delivery``...),
    the message says what is wrong and what is expected."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


@dataclass(frozen=True)
class Schedule:
    """A parsed schedule: ``kind`` ``cron``, ``every`` (``seconds`` apart) or ``at`` (once, at
    ``when``); ``text`` as it was given."""

    kind: Literal["cron", "every", "at"]
    text: str
    seconds: int = 0
    when: float = 0.0

    def first(self, created: float) -> float:
        """The first time (epoch seconds) of a job created at ``created``."""
        if self.kind == "at":
            return self.when
        if self.kind == "every":
            return created + self.seconds
        return _cron_next(self.text, created)

    def following(self, due: float, now: float) -> float | None:
        """The next time after a run that was due at ``due`` and started at ``now``: the
        schedule's first time after ``now`` (missed times are skipped); ``None`` for one shot."""
        if self.kind == "at":
            return None
        if self.kind == "every":
            missed = max(0, int((now - due) // self.seconds))
            return due + (missed + 1) * self.seconds
        return _cron_next(self.text, now)


def _cron_next(expression: str, after: float, field: str = "schedule") -> float:
    from croniter import CroniterBadDateError, croniter

    # In the zone itself, not the offset of ``after``: a daily 09:00 stays 09:00 on the wall
    # the day after a change of daylight saving time.
    zone = _local_zone()
    start = (
        datetime.fromtimestamp(after, zone) if zone else datetime.fromtimestamp(after).astimezone()
    )
    try:
        following = croniter(_for_croniter(expression), start)
        moment = float(following.get_next(float))
        # Autumn's repeated hour: a time of a set hour runs once; one of every hour, each hour.
        repeated = not expression.split()[1].startswith("*")
        while repeated and _wall(moment, zone) <= start.replace(tzinfo=None):
            moment = float(following.get_next(float))
    except CroniterBadDateError:
        raise JobError(field, f"{expression!r} never comes: no date matches it") from None
    return moment


_RANGE: Final = re.compile(r"(\w+)-(\w+)(/\d+)?")


def _for_croniter(expression: str) -> str:
    """``expression`` with each range of one value (``5-5``, ``mon-MON``, ``3-3/2``) written as
    that value: croniter reads such a range as ``*`` (``0 9 * * 1-1`` every day)."""

    def item(text: str) -> str:
        match = _RANGE.fullmatch(text)
        if match is None:
            return text
        low, high = match.group(1), match.group(2)
        same = low.lower() == high.lower() or (
            low.isdigit() and high.isdigit() and int(low) == int(high)
        )
        return low if same else text

    return " ".join(",".join(map(item, field.split(","))) for field in expression.split())


def _wall(moment: float, zone: tzinfo | None) -> datetime:
    """``moment`` on the clock on the wall (naive local time)."""
    return datetime.fromtimestamp(moment, zone).replace(tzinfo=None)


_ZoneFile = tuple[str, int, int, int, int]
"""A zone file as last read: its path, device, inode, modification time (ns) and size."""
_last_zone_file: list[tuple[_ZoneFile, ZoneInfo]] = []


def _local_zone() -> tzinfo | None:
    """The machine's time zone with its rules of daylight saving time (``TZ``, a zone's name or
    a zone file's path, else ``/etc/localtime``); ``None`` when it cannot be read as one (a
    POSIX rule in ``TZ``): then the offset of the moment is used, as ``astimezone`` gives it.
    A zone file is read again only once it changed (another file, or written since): a new zone
    is seen at the next computation."""
    name = os.environ.get("TZ")
    name = "/etc/localtime" if name is None else name.removeprefix(":") or "UTC"
    try:
        if name.startswith("/"):  # a zone file (TZ=:/etc/localtime)
            seen = os.stat(name)  # through the link: a zone chosen again is another file
            key = (name, seen.st_dev, seen.st_ino, seen.st_mtime_ns, seen.st_size)
            if _last_zone_file and _last_zone_file[0][0] == key:
                return _last_zone_file[0][1]
            with open(name, "rb") as local:
                zone = ZoneInfo.from_file(local, key=name)
            _last_zone_file[:] = [(key, zone)]
            return zone
        return ZoneInfo(name)
    except (OSError, ValueError, ZoneInfoNotFoundError):
        return None


def parse_schedule(text: object, now: float, *, field: str = "schedule") -> Schedule:
    """The :class:`Schedule` ``text`` says, or a :class:`JobError` naming ``field`` and the
    forms allowed. ``now`` (epoch seconds) is when the job is created: a one-shot time before
    it is refused."""
    if not isinstance(text, str) or not text.strip():
        raise JobError(field, f"expected {FORMS}, got {text!r}")
    if len(text) > MAX_SCHEDULE:
        raise JobError(field, f"{len(text)} characters; at most {MAX_SCHEDULE}")
    given = " ".join(text.split())
    interval = _INTERVAL.fullmatch(given)
    if interval:
        return Schedule("every", given, seconds=_interval(field, given, interval))
    if len(given.split()) in (5, 6):
        if not _valid_cron(given):
            _bad_cron(field, given)
        _cron_next(given, now, field)  # one date at least must match it
        return Schedule("cron", given)
    try:
        moment = datetime.fromisoformat(given)
    except ValueError as wrong:
        if str(wrong).startswith("Invalid isoformat string"):
            _bad(field, given)
        # The form of a time, a part out of range: say which (30 February, hour 25).
        raise JobError(field, f"{given!r} is no time: {wrong}") from None
    try:
        when = moment.astimezone().timestamp()
    except (OverflowError, ValueError):
        raise JobError(field, f"{given!r} is out of range: past the years 1 to 9999") from None
    if when <= now:
        shown = datetime.fromtimestamp(now).astimezone().isoformat(timespec="seconds")
        raise JobError(field, f"{given!r} is in the past (now is {shown})")
    return Schedule("at", given, when=when)


def _interval(field: str, given: str, interval: re.Match[str]) -> int:
    digits = interval[1].lstrip("0") or "0"
    # A length check first: int() refuses more than 4300 digits with a ValueError of its own.
    seconds = int(digits) * _UNITS[interval[2].lower()] if len(digits) <= 12 else None
    if seconds is None or seconds > MAX_INTERVAL_DAYS * 86400:
        raise JobError(field, f"{given!r}: an interval is at most {MAX_INTERVAL_DAYS} days")
    if seconds < 1:
        raise JobError(field, f"{given!r}: an interval is at least 1 second")
    return seconds


def _valid_cron(expression: str) -> bool:
    try:
        from croniter import croniter
    except ImportError as missing:
        raise JobError(
            "schedule", "cron expressions need croniter: pip install 'hermes-core-agent[cron]'"
        ) from missing
    if len(expression.split()) != 5:
        return False
    return bool(croniter.is_valid(expression))


_CRON_FIELDS: Final = (
    ("minute", "0-59"),
    ("hour", "0-23"),
    ("day of month", "1-31"),
    ("month", "1-12 or jan-dec"),
    ("day of week", "0-7 or sun-sat; 0 and 7 are Sunday"),
)


def _bad_cron(field: str, given: str) -> Schedule:
    """Refuse a cron expression naming what is wrong: its field count, else the first field
    croniter refuses on its own (it says only "out of range" of the whole)."""
    from croniter import croniter

    parts = given.split()
    if len(parts) != len(_CRON_FIELDS):
        names = ", ".join(name for name, _ in _CRON_FIELDS)
        raise JobError(
            field,
            f"{given!r}: it has {len(parts)} fields; a cron expression has five: {names} "
            "(no seconds)",
        )
    for index, (name, values) in enumerate(_CRON_FIELDS):
        alone = ["*"] * len(_CRON_FIELDS)
        alone[index] = parts[index]
        if not croniter.is_valid(" ".join(alone)):
            raise JobError(field, f"{given!r}: its {name} {parts[index]!r} is not valid ({values})")
    return _bad(field, given)


def _bad(field: str, given: str) -> Schedule:
    raise JobError(field, f"{given!r} is not a schedule: expected {FORMS}")


def describe(seconds: float) -> str:
    """``seconds`` from now in words a listing shows (``in 4m``, ``now``)."""
    if seconds <= 0:
        return "now"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"in {int(seconds // size)}{unit}"
    return f"in {int(seconds)}s"


__all__ = [
    "FORMS",
    "MAX_INTERVAL_DAYS",
    "MAX_SCHEDULE",
    "JobError",
    "Schedule",
    "describe",
    "parse_schedule",
]
