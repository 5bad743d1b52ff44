"""One TLS client context per process for every HTTP client hermes makes.

Building a context reads the whole certificate store (about 50 ms of CPU); an HTTP client made
per conversation, per fetch or per provider paid that each time. A context is safe to share
between clients and threads; it is built the first time one is asked for, with httpx's
defaults (certifi's store; ``SSL_CERT_FILE``/``SSL_CERT_DIR`` when ``trust_env``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ssl

_CONTEXTS: dict[bool, ssl.SSLContext] = {}


def tls_context(*, trust_env: bool = True) -> ssl.SSLContext:
    """The process's TLS client context: certificates verified, hostnames checked; with
    ``trust_env`` the ``SSL_CERT_FILE``/``SSL_CERT_DIR`` of the environment when first built."""
    context = _CONTEXTS.get(trust_env)
    if context is None:
        import httpx

        context = _CONTEXTS.setdefault(trust_env, httpx.create_ssl_context(trust_env=trust_env))
    return context


def untrusted_certificate(error: BaseException) -> str | None:
    """What to tell the user when ``error`` (an HTTP client's, or what it wraps) is a server's
    certificate this process does not trust, in one line without the raw SSL text; else None."""
    import ssl

    seen: BaseException | None = error
    for _ in range(8):  # the chain is short: an httpx error over httpcore's over ssl's
        if seen is None:
            return None
        if isinstance(seen, ssl.SSLCertVerificationError):
            reason = seen.verify_message or "certificate verify failed"
            return (
                f"the server's certificate is not trusted ({reason}): set SSL_CERT_FILE to a "
                "PEM file holding the certificate authorities to trust (for a self-signed "
                "server, its certificate) and start hermes again"
            )
        seen = seen.__cause__ or seen.__context__
    return None
