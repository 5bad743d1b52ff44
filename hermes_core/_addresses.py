"""The address rules of the tools that fetch what a model names (``web_extract``, the
``browser_*`` tools): a URL is refused unless its scheme is http or https and every address its
host resolves to is a public one. Loopback, link-local, private, shared, unspecified, multicast,
reserved and cloud metadata addresses are refused, also when an IPv6 address carries one of them
(IPv4-mapped, NAT64, 6to4), unless the user allows the host (``allowed_hosts``, the settings
shape :class:`AddressSettings` the plugins share).

:func:`check_url` returns the addresses it checked: the caller connects to one of them, never to
a second resolution of the name (which a hostile DNS server could answer differently), and
checks every redirect again.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Final

from hermes_core._errors import HermesError

__all__ = [
    "DEFAULT_SETTING",
    "AddressRefused",
    "AddressSettings",
    "allowed_host",
    "check_url",
    "refusal_rule",
]

_Address = ipaddress.IPv4Address | ipaddress.IPv6Address
_Network = ipaddress.IPv4Network | ipaddress.IPv6Network

DEFAULT_SETTING: Final = "the plugin's allowed_hosts setting (plugins.entries.<plugin>)"
_SCHEMES: Final = frozenset({"http", "https"})
_SHOWN_URL: Final = 200

# The instance metadata services of the clouds (AWS, its ECS and EKS agents, GCP and Azure on
# 169.254.169.254; Alibaba; Azure's wire server, a public address; AWS over IPv6): what a
# request forged through a tool would steal credentials from.
_METADATA: Final = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",
        "169.254.170.2",
        "169.254.170.23",
        "100.100.100.200",
        "168.63.129.16",
        "fd00:ec2::254",
        "fd00:ec2::23",
    )
)


def _networks(rule: str, *cidrs: str) -> list[tuple[str, _Network]]:
    return [(rule, ipaddress.ip_network(cidr)) for cidr in cidrs]


# Most specific first: the first network holding an address names the rule that refuses it.
_REFUSED: Final = [
    *_networks("unspecified", "0.0.0.0/8", "::/128"),
    *_networks("loopback", "127.0.0.0/8", "::1/128"),
    *_networks("link-local", "169.254.0.0/16", "fe80::/10"),
    *_networks("private", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"),
    *_networks("shared (carrier-grade NAT)", "100.64.0.0/10"),
    *_networks("multicast", "224.0.0.0/4", "ff00::/8"),
    *_networks("reserved", "240.0.0.0/4", "255.255.255.255/32"),
]

_NAT64: Final = ipaddress.ip_network("64:ff9b::/96")
_CARRIED: Final = ", carried in an IPv6 address"


class AddressRefused(HermesError):
    """A URL a tool will not fetch: ``url`` as given, ``host`` its host, ``address`` the
    resolved address that broke a rule (``None`` when the URL itself did: its scheme, no host, a
    name that does not resolve) and ``rule`` what was broken. The message says all of it and
    how the user allows the host; a tool returns it to the model as its error. ``unresolved``:
    the name did not resolve, which no rule refused and no allowed host mends, and the message
    says to check the name and the DNS instead."""

    def __init__(
        self,
        url: str,
        rule: str,
        *,
        host: str = "",
        address: str | None = None,
        setting: str,
        unresolved: bool = False,
    ) -> None:
        self.url = url
        self.host = host
        self.address = address
        self.rule = rule
        self.unresolved = unresolved
        shown = url if len(url) <= _SHOWN_URL else url[:_SHOWN_URL] + "..."
        if unresolved:
            super().__init__(f"cannot fetch {shown}: {rule}; check the name and this machine's DNS")
            return
        if address is None:
            why = rule
        elif host and _literal(host) is None:
            why = f"{host} resolves to {address}, {_kind_of(rule)}"
        else:
            why = f"{address} is {_kind_of(rule)}"
        allow = (
            f"; to allow this host, the user adds {host!r} to {setting}"
            if host and address is not None
            else f" (allowed hosts: {setting})"
        )
        super().__init__(
            f"refused to fetch {shown}: {why}. Tools may not reach this machine's services, its "
            f"local network or a cloud metadata endpoint{allow}."
        )


def _kind_of(rule: str) -> str:
    """``rule`` (of :func:`refusal_rule`) as what the address is: "a private (10.0.0.0/8)
    address", "an IPv6 address carrying a loopback (127.0.0.0/8) address"."""
    inner, carried, _ = rule.partition(_CARRIED)
    kind = f"{'an' if inner[:1] in 'aeiou' else 'a'} {inner} address"
    return f"an IPv6 address carrying {kind}" if carried else kind


def _literal(host: str) -> _Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def refusal_rule(address: _Address) -> str | None:
    """The rule that refuses ``address`` (``"loopback (127.0.0.0/8)"``...), or ``None`` for a
    public address. An IPv6 address that carries an IPv4 one (IPv4-mapped, NAT64, 6to4) is
    judged by the IPv4 address too."""
    if address in _METADATA:
        return "cloud metadata"
    for rule, network in _REFUSED:
        if address in network:
            return f"{rule} ({network})"
    if isinstance(address, ipaddress.IPv6Address):
        inner: ipaddress.IPv4Address | None = address.ipv4_mapped or address.sixtofour
        if inner is None and address in _NAT64:
            inner = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if inner is not None:
            carried = refusal_rule(inner)
            if carried is not None:
                return f"{carried}{_CARRIED}"
    if not address.is_global:
        return "reserved (not globally routable)"
    return None


def _resolve(host: str, port: int) -> Sequence[str]:
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in found]


def _parsed(address: str) -> _Address | None:
    try:
        return ipaddress.ip_address(address)
    except ValueError:
        return None


@dataclass(frozen=True)
class _Allowed:
    names: frozenset[str]
    suffixes: tuple[str, ...]
    networks: tuple[_Network, ...]

    @classmethod
    def of(cls, entries: Collection[str]) -> _Allowed:
        names: set[str] = set()
        suffixes: list[str] = []
        networks: list[_Network] = []
        for entry in entries:
            kept = allowed_host(entry)
            if kept.startswith("*."):
                suffixes.append(kept[1:])
            elif "/" in kept or _literal(kept) is not None:
                networks.append(ipaddress.ip_network(kept.strip("[]"), strict=False))
            else:
                names.add(kept)
        return cls(frozenset(names), tuple(suffixes), tuple(networks))

    def host(self, host: str) -> bool:
        return host in self.names or host.endswith(self.suffixes)

    def address(self, address: _Address) -> bool:
        return any(address in network for network in self.networks)


def check_url(
    url: str,
    *,
    allowed_hosts: Collection[str] = (),
    resolve: Callable[[str, int], Sequence[str]] | None = None,
    setting: str = DEFAULT_SETTING,
) -> list[str]:
    """Refuse (raise :class:`AddressRefused`) a URL whose scheme is not http/https or whose
    host resolves to any loopback, link-local (169.254/16, fe80::/10), private (10/8, 172.16/12,
    192.168/16, fc00::/7), unspecified, multicast, reserved or cloud-metadata address, unless
    the host is in ``allowed_hosts``; return the resolved addresses (so a caller can connect to
    them and not re-resolve: DNS rebinding). ``resolve`` defaults to ``socket.getaddrinfo``.

    An entry of ``allowed_hosts`` is a host name (matched whole, case and a final dot aside),
    ``*.name`` (every name under ``name``), an address or a network (``10.0.0.0/8``: the
    addresses in it). ``setting`` names where the user allows a host, for the message.
    """
    import httpx  # here: a host that never fetches a URL never imports it

    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError) as exc:
        raise AddressRefused(url, f"it is not a valid URL ({exc})", setting=setting) from None
    if parsed.scheme not in _SCHEMES:
        scheme = parsed.scheme or "(none)"
        raise AddressRefused(url, f"its scheme {scheme!r} is not http or https", setting=setting)
    host = parsed.raw_host.decode("ascii").lower().rstrip(".")
    if not host:
        raise AddressRefused(url, "it names no host", setting=setting)
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    allowed = _Allowed.of(allowed_hosts)
    try:
        addresses = list(dict.fromkeys((resolve or _resolve)(host, port)))
    except (OSError, UnicodeError) as exc:
        raise AddressRefused(
            url,
            f"its host {host} does not resolve ({exc})",
            host=host,
            setting=setting,
            unresolved=True,
        ) from None
    if not addresses:
        raise AddressRefused(
            url,
            f"its host {host} does not resolve (no address)",
            host=host,
            setting=setting,
            unresolved=True,
        )
    if allowed.host(host):
        return addresses
    for text in addresses:
        address = _parsed(text)
        if address is None:
            raise AddressRefused(
                url, f"its host {host} resolved to {text!r}, not an address", setting=setting
            )
        if allowed.address(address):
            continue
        rule = refusal_rule(address)
        if rule is not None:
            raise AddressRefused(url, rule, host=host, address=text, setting=setting)
    return addresses


def loopback_host(host: str) -> bool:
    """Whether ``host`` (an IP address, or ``localhost``) is one of this machine's loopback
    addresses; a name is taken for one beyond it, since what it resolves to may change."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def allowed_host(value: object) -> str:
    """One entry of ``allowed_hosts`` as kept (lower case, no final dot, an address or network
    in its usual spelling); raises ``ValueError`` saying what an entry may be."""
    expected = (
        "expected a host name, '*.' and a domain, an IP address or a network "
        f"(10.0.0.0/8), without scheme, port or path; got {value!r}"
    )
    if not isinstance(value, str):
        raise ValueError(expected)
    text = value.strip().lower().rstrip(".")
    if "/" in text:
        try:
            return str(ipaddress.ip_network(text, strict=False))
        except ValueError:
            raise ValueError(expected) from None
    literal = _literal(text)
    if literal is not None:
        return str(literal)
    name = text[2:] if text.startswith("*.") else text
    labels = name.split(".")
    try:
        ascii_name = name.encode("idna").decode("ascii")
    except UnicodeError:
        raise ValueError(expected) from None
    if (
        not name
        or not all(labels)
        or not all(
            part.replace("-", "").replace("_", "").isalnum() for part in ascii_name.split(".")
        )
    ):
        raise ValueError(expected)
    return ("*." if text.startswith("*.") else "") + ascii_name


@dataclass(frozen=True)
class AddressSettings:
    """The settings the tools that fetch URLs share (a plugin's settings dataclass inherits
    them): ``allowed_hosts``, the hosts (names, ``*.domain``, addresses, networks) their
    requests may reach although the address rules refuse them."""

    allowed_hosts: list[Annotated[str, allowed_host]] = field(default_factory=list)
