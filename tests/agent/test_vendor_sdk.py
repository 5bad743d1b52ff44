"""``VendorSdk`` for a provider outside hermes: a third party's plugin over its vendor's SDK,
whose provider name, import name and pip package differ (``gemini``, ``google.genai``,
``google-genai``). Its refusals name the package to install, not an extra of hermes-core-agent
that does not exist, and an SDK under a namespace that is absent is refused the same."""

from __future__ import annotations

import pytest

from hermes_core import Config, Environment
from hermes_core.agent import ModelError, ModelSettings, VendorSdk
from hermes_core.plugin import ModelContext


def _context() -> ModelContext:
    settings = ModelSettings("gemini", "small-model", base_url="http://127.0.0.1:9")
    return ModelContext(Config(), Environment.from_process(), {}, model=settings)


def _sdk(module: str) -> VendorSdk:
    return VendorSdk(
        "gemini",
        "GEMINI_API_KEY",
        sdk_base_url_variable="GEMINI_BASE_URL",
        local_example="http://127.0.0.1:8080",
        module=module,
        install="google-genai",
    )


@pytest.mark.parametrize(
    "module", ["absent_vendor_sdk_r11", "absent_vendor_ns_r11.genai", "json.absent_genai_r11"]
)
def test_a_third_partys_sdk_not_installed_names_its_own_package(module: str) -> None:
    with pytest.raises(ModelError) as refused:
        _sdk(module).check_ready(_context())

    assert str(refused.value).startswith(
        f"the gemini model provider needs the {module} package: pip install 'google-genai'"
    )
    assert "hermes-core-agent" not in str(refused.value)


def test_an_import_error_of_the_sdk_or_its_namespace_is_the_sdk_missing() -> None:
    sdk = _sdk("absent_vendor_ns_r11.genai")

    assert sdk.is_missing(ImportError("x", name="absent_vendor_ns_r11"))
    assert sdk.is_missing(ImportError("x", name="absent_vendor_ns_r11.genai.types"))
    assert not sdk.is_missing(ImportError("x", name="httpx"))


def test_a_bundled_providers_sdk_still_names_its_extra() -> None:
    sdk = VendorSdk("absent_sdk_r11", "K", sdk_base_url_variable="B", local_example="http://x")

    with pytest.raises(ModelError, match=r"pip install 'hermes-core-agent\[absent_sdk_r11\]'"):
        sdk.check_ready(_context())
