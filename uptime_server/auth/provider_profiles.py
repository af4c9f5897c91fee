"""Who signed in: turning each kind of provider's answer into a ``Profile``.

The subject is the provider's stable account id (GitHub's numeric id, the
OIDC ``sub``). Whether the address is verified is what the provider says:
``email_verified`` true or false, or None when it says nothing (a generic
provider without the claim). Sign-up takes an address the provider did not
call unverified; admin rights (``auth/admins``) only one it called verified.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from uptime_server.auth.provider_spec import ProviderSpec

GITHUB_ACCEPT = {"Accept": "application/vnd.github+json"}
GOOGLE_ISSUER = "https://accounts.google.com"
# Google's id_tokens may carry its issuer without the scheme.
ISSUER_ALIASES = {GOOGLE_ISSUER: ("accounts.google.com",)}


class ProfileError(ValueError):
    """The provider's answer lacks what a sign-in needs."""


@dataclass(frozen=True)
class Profile:
    subject: str
    email: str | None
    email_verified: bool | None  # None: the provider did not say
    name: str | None
    avatar_url: str | None

    @property
    def verified_email(self) -> str | None:
        """The address, if the provider asserted it is verified."""
        return self.email if self.email and self.email_verified is True else None

    @property
    def signup_email(self) -> str | None:
        """The address, unless the provider said it is not verified.

        A provider the administrator configured and that does not send
        ``email_verified`` is taken at its word for who may sign up, as
        before; never for admin rights.
        """
        return self.email if self.email and self.email_verified is not False else None


def github_profile(client: Any, spec: ProviderSpec, token: dict[str, Any]) -> Profile:
    user = _get_json(client, spec.userinfo_url, token, GITHUB_ACCEPT)
    if not isinstance(user, dict) or not isinstance(user.get("id"), int):
        raise ProfileError("GitHub /user has no numeric id")
    # Whether an address is verified is what /user/emails says of it, for
    # the public one (/user) too: nothing else in GitHub's answers vouches.
    emails_url = spec.emails_url or f"{spec.userinfo_url.rstrip('/')}/emails"
    verified = _github_verified(_get_json(client, emails_url, token, GITHUB_ACCEPT))
    public = user.get("email") or None
    email = public if public and public.lower() in verified else verified.get("")
    if email is None and isinstance(public, str):
        email = public  # listed nowhere as verified: kept, but it vouches for nothing
    return Profile(
        subject=str(user["id"]),
        email=email,
        email_verified=email is not None and email.lower() in verified,
        name=user.get("name") or user.get("login"),
        avatar_url=user.get("avatar_url"),
    )


def _github_verified(emails: Any) -> dict[str, str]:
    """The verified addresses of a /user/emails answer, lower-cased, each to itself;
    the primary one also under the key ``""``."""
    if not isinstance(emails, list):
        raise ProfileError("GitHub /user/emails is not a list")
    verified: dict[str, str] = {}
    for entry in emails:
        address = entry.get("email") if isinstance(entry, dict) else None
        if isinstance(address, str) and address and entry.get("verified") is True:
            verified[address.lower()] = address
            if entry.get("primary"):
                verified[""] = address
    return verified


def oidc_profile(client: Any, spec: ProviderSpec, token: dict[str, Any], nonce: str) -> Profile:
    if "id_token" not in token:
        raise ProfileError("the token response has no id_token")
    if not nonce:
        raise ProfileError("no nonce was recorded for this sign-in")
    metadata = client.load_server_metadata()
    issuer = metadata.get("issuer")
    if not issuer:
        raise ProfileError("the discovery document has no issuer")
    options = {
        "iss": {"essential": True, "values": [issuer, *ISSUER_ALIASES.get(issuer, ())]},
        "aud": {"essential": True, "value": spec.client_id},
    }
    # Authlib checks the signature against the provider's JWKS, then exp,
    # iss and aud (options) and nonce, azp and at_hash (CodeIDToken).
    claims = dict(client.parse_id_token(token, nonce=nonce, claims_options=options))
    if not claims.get("email"):
        claims = _with_userinfo(client, spec, token, claims, metadata)
    return _claims_profile(claims)


def _with_userinfo(
    client: Any, spec: ProviderSpec, token: dict[str, Any], claims: dict[str, Any], meta: Any
) -> dict[str, Any]:
    url = spec.userinfo_url or meta.get("userinfo_endpoint")
    if not url:
        return claims
    info = _get_json(client, url, token)
    # OIDC Core 5.3.2: userinfo about another subject must be ignored.
    if not isinstance(info, dict) or str(info.get("sub")) != str(claims["sub"]):
        raise ProfileError("userinfo is about a different subject than the id_token")
    return {**info, **{k: v for k, v in claims.items() if v is not None}}


def oauth2_profile(client: Any, spec: ProviderSpec, token: dict[str, Any]) -> Profile:
    info = _get_json(client, spec.userinfo_url, token)
    if not isinstance(info, dict):
        raise ProfileError("userinfo is not a JSON object")
    if info.get("sub") is None and info.get("id") is not None:
        info = {**info, "sub": info["id"]}
    return _claims_profile(info)


def _claims_profile(claims: dict[str, Any]) -> Profile:
    subject = claims.get("sub")
    if subject is None or str(subject) == "":
        raise ProfileError("the provider did not say who signed in (no sub)")
    email = claims.get("email") or None
    return Profile(
        subject=str(subject),
        email=email if isinstance(email, str) else None,
        email_verified=_asserted(claims.get("email_verified")),
        name=claims.get("name") or claims.get("preferred_username") or claims.get("login"),
        avatar_url=claims.get("picture") or claims.get("avatar_url"),
    )


def _asserted(claim: Any) -> bool | None:
    """``email_verified`` as the provider said it: true, false, or None when absent.

    Some providers (older Google answers, Cognito) send it as a string.
    """
    if claim is None:
        return None
    if isinstance(claim, str):
        return claim.strip().lower() == "true"
    return claim is True


def _get_json(
    client: Any, url: str | None, token: dict[str, Any], headers: dict[str, str] | None = None
) -> Any:
    if not url:
        raise ProfileError("no userinfo URL is configured")
    response = client.get(url, token=token, headers=headers or {"Accept": "application/json"})
    response.raise_for_status()
    return response.json()
