"""A peer certificate's expiry and identity, as the https and tcp (tls) checks report them."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime

from cryptography import x509


@dataclass(frozen=True)
class PeerCert:
    """What a check reports of the certificate it was shown.

    ``serial`` and ``not_after`` together name the certificate: a renewed one
    differs in at least one of them (checks/cert_alerts.py).
    """

    not_after: datetime
    serial: str  # upper-case hex, no separators


@functools.lru_cache(maxsize=256)
def peer_cert(der: bytes | None) -> PeerCert | None:
    """The not-after time and serial of a DER certificate; None when absent or unreadable.

    Cached by the certificate's bytes: monitors of one site see the same
    certificate check after check, and parsing it costs more than the lookup.
    """
    if not der:
        return None
    try:
        cert = x509.load_der_x509_certificate(der)
        return PeerCert(cert.not_valid_after_utc, format(cert.serial_number, "X"))
    except ValueError:
        return None
