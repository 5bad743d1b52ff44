"""The process's one TLS client context: shared by every HTTP client hermes and its bundled
plugins make (building one reads the whole certificate store), and still a verifying one."""

from __future__ import annotations

import ssl

from hermes_core._plugin_support import tls_context


def test_every_client_gets_the_same_context_and_it_verifies_certificates_and_names() -> None:
    context = tls_context()

    assert tls_context() is context
    assert context.verify_mode is ssl.CERT_REQUIRED
    assert context.check_hostname is True
    assert context.cert_store_stats()["x509_ca"] > 0


def test_a_client_that_ignores_the_environment_gets_a_context_of_its_own() -> None:
    assert tls_context(trust_env=False) is tls_context(trust_env=False)
    assert tls_context(trust_env=False) is not tls_context()
    assert tls_context(trust_env=False).verify_mode is ssl.CERT_REQUIRED
