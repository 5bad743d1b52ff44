"""The browser's address proxy alone, with a real HTTP client through it (no Chromium): what it
lets through goes to the address the rule checked, what it refuses is marked and noted."""

from __future__ import annotations

import httpx
import pytest
from browser_site import Site

from plugins_builtin.browser.guard import REFUSED_HEADER, AddressProxy, Refused

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    """The proxy runs on asyncio, as Playwright does."""
    return "asyncio"


def _rule(url: str) -> list[str]:
    """A fake DNS and address rule: ``pinned.invalid`` (a name no resolver knows) is checked
    as 127.0.0.1; everything else is refused."""
    if "pinned.invalid" in url:
        return ["127.0.0.1"]
    raise Refused(f"{url} is refused by the test's rule")


async def test_the_proxy_connects_to_the_checked_address_and_refuses_the_rest(
    site: Site,
) -> None:
    proxy = AddressProxy(_rule)
    address = await proxy.start()
    port = site.url.rsplit(":", 1)[1]
    try:
        async with httpx.AsyncClient(proxy=address, trust_env=False) as client:
            through = await client.get(f"http://pinned.invalid:{port}/about")
            refused = await client.get("http://169.254.169.254/latest/meta-data/")
            with pytest.raises(httpx.ProxyError):
                await client.get("https://10.0.0.1/")
    finally:
        await proxy.close()

    assert through.status_code == 200
    assert "About us" in through.text  # the site was reached at the checked address
    assert refused.status_code == 403
    assert refused.headers[REFUSED_HEADER] == "1"
    assert "169.254.169.254" in refused.text
    assert set(proxy.refusals) == {"169.254.169.254:80", "10.0.0.1:443"}
    assert "10.0.0.1" in proxy.refusals["10.0.0.1:443"]
