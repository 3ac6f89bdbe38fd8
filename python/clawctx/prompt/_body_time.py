"""Time formatting of the prompt-body pipeline (:mod:`clawctx.prompt.prompt_body`): event and
conversation timestamps as Node's ``Intl`` prints them in en-US (OpenClaw 2026.3.13
`src/auto-reply/reply/session-updates.ts`, ``formatSystemEventTimestamp``;
`src/auto-reply/reply/inbound-meta.ts`, ``formatConversationTimestamp``), including ICU's short
zone names. Private: ``clawctx.prompt.prompt_body`` exports these names.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone, tzinfo
from typing import Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from clawctx._js import js_trim as _js_trim


def _format_conversation_timestamp(value: int | float | None) -> str | None:
    """inbound-meta.ts ``formatConversationTimestamp``: a finite number of milliseconds as
    ``Thu 1970-01-01 00:00 UTC`` (host zone, no seconds); ``None`` otherwise."""
    if value is None:
        return None
    moment = _utc_moment(value)
    if moment is None:
        return None
    return _format_zoned_timestamp(moment, None, seconds=False, weekday=True)


# ICU's en-US short names (what Intl's timeZoneName "short" prints) exist only for these
# abbreviations; every other zone prints "GMT±H[:MM]". Checking the offset as well keeps, e.g.,
# China's "CST" (+08:00) from passing as US Central.
_ICU_SHORT_ZONE_OFFSETS: Final = {
    "UTC": 0,
    "GMT": 0,
    "EST": -300,
    "EDT": -240,
    "CST": -360,
    "CDT": -300,
    "MST": -420,
    "MDT": -360,
    "PST": -480,
    "PDT": -420,
    "AKST": -540,
    "AKDT": -480,
    "HST": -600,
    "HDT": -540,
    "AST": -240,
    "ADT": -180,
}


def _short_zone_name(moment: datetime, *, before_epoch: bool = False) -> str:
    """ICU's en-US short zone name. The US abbreviations come from ICU's metazones, whose
    mappings start at 1970-01-01T00:00Z, so before that instant ICU (V8's ``Intl``) prints the
    ``GMT±H`` form (ts ``-1`` in America/New_York is ``GMT-5``, OpenClaw 2026.3.13 conformance
    cases); ``UTC`` is the zone's own name and stays."""
    offset = moment.utcoffset() or timedelta(0)
    minutes = int(offset.total_seconds() // 60)
    name = moment.tzname() or ""
    if _ICU_SHORT_ZONE_OFFSETS.get(name) == minutes and (name == "UTC" or not before_epoch):
        return name
    if minutes == 0:
        return "GMT"
    sign = "+" if minutes > 0 else "-"
    hours, rest = divmod(abs(minutes), 60)
    return f"GMT{sign}{hours}:{rest:02d}" if rest else f"GMT{sign}{hours}"


def _resolve_zone(name: str | None) -> tzinfo | None:
    """A valid IANA zone, or ``None`` (invalid or blank)."""
    trimmed = _js_trim(name) if name else ""
    if not trimmed:
        return None
    try:
        return ZoneInfo(trimmed)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None


def _host_zone(moment_utc: datetime) -> tzinfo:
    local = moment_utc.astimezone()
    return local.tzinfo or timezone.utc


def _utc_moment(ts_ms: float) -> datetime | None:
    """``new Date(ts_ms)`` as an aware UTC datetime (fractional milliseconds truncated);
    ``None`` when not finite or outside JavaScript's or Python's date range."""
    if not math.isfinite(ts_ms) or abs(ts_ms) > 8.64e15:
        return None
    try:
        return datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(milliseconds=math.trunc(ts_ms))
    except OverflowError:
        return None


_WEEKDAYS: Final = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def _format_zoned_timestamp(
    moment: datetime, zone: tzinfo | None, *, seconds: bool, weekday: bool = False
) -> str | None:
    """OpenClaw 2026.3.13 `src/infra/format-time/format-datetime.ts` (``formatZonedTimestamp``):
    ``YYYY-MM-DD HH:MM[:SS] <TZ>`` (24 h) in ``zone`` (the host zone when ``None``), with
    ICU's en-US short zone name (:func:`_short_zone_name`); ``weekday`` puts the en-US short
    weekday in front (inbound-meta.ts, ``formatConversationTimestamp``). ``None`` when the
    moment cannot be shown in the zone."""
    try:
        zoned = moment.astimezone(zone or _host_zone(moment))
    except (OverflowError, ValueError, OSError):
        return None
    before_epoch = moment < datetime(1970, 1, 1, tzinfo=timezone.utc)
    text = zoned.strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M")
    text = f"{text} {_short_zone_name(zoned, before_epoch=before_epoch)}"
    return f"{_WEEKDAYS[zoned.weekday()]} {text}" if weekday else text


def format_system_event_timestamp(
    ts_ms: float,
    *,
    envelope_timezone: str | None = None,
    user_timezone: str | None = None,
) -> str:
    """``formatSystemEventTimestamp`` (session-updates.ts): the timestamp of a ``System:`` line.

    ``envelope_timezone`` (``agents.defaults.envelopeTimezone``): ``utc``/``gmt`` →
    ``YYYY-MM-DDTHH:MM:SSZ``; unset, ``local``, ``host`` or an invalid name → the host zone;
    ``user`` → ``user_timezone`` (host zone when unset or invalid); an IANA name → that zone.
    Zoned form: ``YYYY-MM-DD HH:MM:SS <TZ>`` (24 h). ``<TZ>`` imitates ICU's en-US short names:
    the zone's abbreviation when ICU has one for it (US zones, ``UTC``, ``GMT``; checked
    against the offset; not before 1970 except ``UTC``, as ICU's metazones start then), else
    ``GMT±H`` / ``GMT±H:MM``. A timestamp that is not finite or
    outside the date range (JavaScript's or Python's) → ``unknown-time``. Fractional
    milliseconds are truncated, as ``new Date()`` does.
    """
    moment = _utc_moment(ts_ms)
    if moment is None:
        return "unknown-time"
    mode = _js_trim(envelope_timezone).lower() if envelope_timezone else ""
    if mode in ("utc", "gmt"):
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    zone: tzinfo | None
    if mode in ("", "local", "host"):
        zone = None
    elif mode == "user":
        zone = _resolve_zone(user_timezone)
    else:
        zone = _resolve_zone(envelope_timezone)
    return _format_zoned_timestamp(moment, zone, seconds=True) or "unknown-time"
