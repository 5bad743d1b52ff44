"""The address rule of ``web_extract`` (``check_url``), as the browser's proxy asks it."""

from __future__ import annotations

from collections.abc import Sequence

from hermes_core._plugin_support import AddressRefused, check_url

from .guard import Refused, Resolve

__all__ = ["address_rule"]

_SETTING = "plugins.entries.browser.allowed_hosts"


def address_rule(allowed_hosts: Sequence[str]) -> Resolve:
    """The rule of :class:`~.guard.AddressProxy`: the addresses ``check_url`` checked, or its
    refusal as :class:`~.guard.Refused`."""
    allowed = tuple(allowed_hosts)

    def resolve(url: str) -> list[str]:
        try:
            return list(check_url(url, allowed_hosts=allowed, setting=_SETTING))
        except AddressRefused as exc:
            raise Refused(str(exc), unresolved=exc.unresolved) from exc

    return resolve
