"""The address rules of the web tools (hermes_core/_addresses.py): a URL a model gives is
refused when its scheme is not http(s) or its host resolves to the machine itself, the local
network or a cloud metadata endpoint, unless the user allows the host. Names are mapped by an
injected resolver (a test name stands for a public one); nothing here touches the network."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pytest

from hermes_core import Config, Environment, HermesError
from hermes_core._plugin_support import AddressRefused, AddressSettings, check_url
from hermes_core.plugin import PluginContext, PluginSettingsError

_NAMES = {
    "public.example": ["93.184.215.14"],
    "dual.example": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
    "sneaky.example": ["93.184.215.14", "10.1.2.3"],
    "intranet.example": ["192.168.1.20"],
}


def _resolve(host: str, port: int) -> Sequence[str]:
    try:
        return _NAMES[host]
    except KeyError:
        # A literal address resolves to itself, as getaddrinfo does.
        return [host.strip("[]")]


@pytest.mark.parametrize(
    ("url", "address", "rule"),
    [
        ("http://127.0.0.1:8000/", "127.0.0.1", "loopback"),
        ("http://127.9.9.9/", "127.9.9.9", "loopback"),
        ("http://[::1]/", "::1", "loopback"),
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254", "cloud metadata"),
        ("http://100.100.100.200/", "100.100.100.200", "cloud metadata"),
        ("http://[fd00:ec2::254]/", "fd00:ec2::254", "cloud metadata"),
        ("http://169.254.10.1/", "169.254.10.1", "link-local"),
        ("http://[fe80::1]/", "fe80::1", "link-local"),
        ("http://10.0.0.1/", "10.0.0.1", "private"),
        ("https://172.16.5.4/", "172.16.5.4", "private"),
        ("http://192.168.0.1/", "192.168.0.1", "private"),
        ("http://[fc00::5]/", "fc00::5", "private"),
        ("http://0.0.0.0/", "0.0.0.0", "unspecified"),
        ("http://[::]/", "::", "unspecified"),
        ("http://224.0.0.1/", "224.0.0.1", "multicast"),
        ("http://240.0.0.1/", "240.0.0.1", "reserved"),
        ("http://[::ffff:127.0.0.1]/", "::ffff:127.0.0.1", "loopback"),
        ("http://[64:ff9b::a00:1]/", "64:ff9b::a00:1", "private"),
        ("http://intranet.example/", "192.168.1.20", "private"),
        ("http://sneaky.example/", "10.1.2.3", "private"),
    ],
)
def test_a_url_reaching_the_machine_or_its_network_is_refused(
    url: str, address: str, rule: str
) -> None:
    with pytest.raises(AddressRefused) as refused:
        check_url(url, resolve=_resolve)
    error = refused.value
    assert (error.url, error.address) == (url, address)
    assert rule in error.rule
    message = str(error)
    assert url in message
    assert address in message
    assert rule in message
    assert "allowed_hosts" in message
    assert isinstance(error, HermesError)


def test_a_public_host_passes_and_its_checked_addresses_are_returned() -> None:
    assert check_url("https://public.example/a?b=c", resolve=_resolve) == ["93.184.215.14"]
    assert check_url("http://dual.example/", resolve=_resolve) == _NAMES["dual.example"]
    assert check_url("http://8.8.8.8/", resolve=_resolve) == ["8.8.8.8"]


def test_the_resolver_is_asked_for_the_urls_host_and_port() -> None:
    asked: list[tuple[str, int]] = []

    def resolve(host: str, port: int) -> Sequence[str]:
        asked.append((host, port))
        return ["93.184.215.14"]

    check_url("https://Public.Example./x", resolve=resolve)
    check_url("http://public.example:8080/", resolve=resolve)
    assert asked == [("public.example", 443), ("public.example", 8080)]


@pytest.mark.parametrize(
    "url",
    ["file:///etc/passwd", "ftp://public.example/", "gopher://public.example/", "javascript:1"],
)
def test_a_scheme_other_than_http_or_https_is_refused(url: str) -> None:
    with pytest.raises(AddressRefused, match="scheme"):
        check_url(url, resolve=_resolve)


@pytest.mark.parametrize("url", ["", "http://", "http:///path", "not a url at all"])
def test_a_url_without_a_host_is_refused(url: str) -> None:
    with pytest.raises(AddressRefused):
        check_url(url, resolve=_resolve)


def test_a_name_that_does_not_resolve_is_refused_clearly() -> None:
    def nowhere(host: str, port: int) -> Sequence[str]:
        raise OSError(-2, "Name or service not known")

    with pytest.raises(AddressRefused, match="does not resolve") as refused:
        check_url("http://nowhere.example/", resolve=nowhere)
    # No rule refused it, so nothing points at the rules or at allowed_hosts.
    assert refused.value.unresolved
    assert "allowed" not in str(refused.value)
    assert "local network" not in str(refused.value)


def test_an_allowed_host_passes_whatever_it_resolves_to() -> None:
    assert check_url(
        "http://intranet.example/wiki", allowed_hosts=["intranet.example"], resolve=_resolve
    ) == ["192.168.1.20"]
    assert check_url("http://127.0.0.1:8000/", allowed_hosts=["127.0.0.1"], resolve=_resolve) == [
        "127.0.0.1"
    ]
    assert check_url("http://[::1]/", allowed_hosts=["::1"], resolve=_resolve) == ["::1"]


def test_an_allowed_host_is_matched_exactly_or_by_a_wildcard_for_its_subdomains() -> None:
    with pytest.raises(AddressRefused):
        check_url("http://intranet.example/", allowed_hosts=["other.example"], resolve=_resolve)
    with pytest.raises(AddressRefused):
        check_url("http://intranet.example/", allowed_hosts=["example"], resolve=_resolve)
    assert check_url("http://intranet.example/", allowed_hosts=["*.example"], resolve=_resolve) == [
        "192.168.1.20"
    ]


def test_an_allowed_network_covers_the_addresses_in_it_only() -> None:
    assert check_url(
        "http://intranet.example/", allowed_hosts=["192.168.1.0/24"], resolve=_resolve
    ) == ["192.168.1.20"]
    with pytest.raises(AddressRefused) as refused:
        check_url("http://sneaky.example/", allowed_hosts=["192.168.0.0/16"], resolve=_resolve)
    assert refused.value.address == "10.1.2.3"


def test_an_allowed_host_does_not_allow_another_scheme() -> None:
    with pytest.raises(AddressRefused, match="scheme"):
        check_url("file://intranet.example/x", allowed_hosts=["intranet.example"])


def test_the_message_names_the_setting_the_caller_gives() -> None:
    with pytest.raises(AddressRefused, match=r"plugins\.entries\.web\.allowed_hosts"):
        check_url(
            "http://10.0.0.1/",
            resolve=_resolve,
            setting="plugins.entries.web.allowed_hosts",
        )


@dataclass(frozen=True)
class _Settings(AddressSettings):
    pass


def test_allowed_hosts_are_typed_settings_checked_where_they_are_written(
    hermes_env: Environment,
) -> None:
    def context(settings: dict[str, object]) -> PluginContext:
        return PluginContext(Config(), hermes_env, settings, plugin="demo")

    written = ["Wiki.Corp.", "10.0.0.0/8", "*.lan", "::1"]
    settings = context({"allowed_hosts": written}).settings_as(_Settings)
    assert settings.allowed_hosts == ["wiki.corp", "10.0.0.0/8", "*.lan", "::1"]
    assert context({}).settings_as(_Settings).allowed_hosts == []
    for wrong in ["http://wiki.corp/", "wiki.corp:8080", "10.0.0.0/33", "", "a b", "*"]:
        with pytest.raises(PluginSettingsError, match="allowed_hosts"):
            context({"allowed_hosts": [wrong]}).settings_as(_Settings)


@pytest.mark.parametrize(
    ("url", "said"),
    [
        (
            "http://[::ffff:10.0.0.1]/",
            "::ffff:10.0.0.1 is an IPv6 address carrying a private (10.0.0.0/8) address.",
        ),
        (
            "http://[2002:a9fe:a9fe::]/",
            "2002:a9fe:a9fe:: is an IPv6 address carrying a cloud metadata address.",
        ),
        ("http://0.0.0.0/", "0.0.0.0 is an unspecified (0.0.0.0/8) address."),
        ("http://127.0.0.1/", "127.0.0.1 is a loopback (127.0.0.0/8) address."),
    ],
)
def test_the_refusal_reads_as_a_sentence_whatever_the_rule(url: str, said: str) -> None:
    # It read "is a private (10.0.0.0/8), carried in an IPv6 address address" and
    # "is a unspecified": a user reads this line to decide whether to allow the host.
    with pytest.raises(AddressRefused) as refused:
        check_url(url, resolve=_resolve)

    assert said in str(refused.value)
