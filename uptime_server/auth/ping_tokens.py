"""Heartbeat ping tokens: minted, looked up by hash, shown again to their owner.

A token is 128 bits and more from ``secrets`` (``token_urlsafe(22)``, 176
bits), the only credential of the ping path. The database keeps its SHA-256
in a unique-indexed column, which is all the ping path reads, so a token is
never compared by scanning and never needed in plain to answer a ping.

Its owner must see the ping URL again in ``GET /monitors/{id}``, so the token
is also kept sealed (AES-GCM) under a key derived from the server's secret
key: a copy of the database alone yields no working ping URL. Should the
secret key change, the pings keep working (the hash did not move) but the
URL can no longer be shown; ``ping_url`` is then null until the token is
rotated (``POST /monitors/{id}/ping-token``).
"""

from __future__ import annotations

import base64
import hashlib
import os
import secrets

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

TOKEN_BYTES = 22
MAX_TOKEN = 64  # characters; anything longer is no token of ours
_NONCE = 12


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _key(secret_key: str) -> bytes:
    return hashlib.sha256(b"uptime ping-token seal\x00" + secret_key.encode()).digest()


def seal(token: str, secret_key: str) -> str:
    nonce = os.urandom(_NONCE)
    sealed = AESGCM(_key(secret_key)).encrypt(nonce, token.encode(), b"ping-token")
    return base64.urlsafe_b64encode(nonce + sealed).decode()


def unseal(sealed: str | None, secret_key: str) -> str | None:
    """The token, or None when there is none or it was sealed under another key."""
    if not sealed:
        return None
    try:
        raw = base64.urlsafe_b64decode(sealed.encode())
        return AESGCM(_key(secret_key)).decrypt(raw[:_NONCE], raw[_NONCE:], b"ping-token").decode()
    except (InvalidTag, ValueError):
        return None


def ping_url(base_url: str, token: str | None) -> str | None:
    return None if token is None else f"{base_url.rstrip('/')}/ping/{token}"
