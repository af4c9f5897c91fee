"""A peer certificate's expiry, as the https and tcp (tls) checks report it."""

from __future__ import annotations

import functools
from datetime import datetime

from cryptography import x509


@functools.lru_cache(maxsize=256)
def cert_expiry(der: bytes | None) -> datetime | None:
    """The not-after time of a DER certificate; None when absent or unreadable.

    Cached by the certificate's bytes: monitors of one site see the same
    certificate check after check, and parsing it costs more than the lookup.
    """
    if not der:
        return None
    try:
        return x509.load_der_x509_certificate(der).not_valid_after_utc
    except ValueError:
        return None
