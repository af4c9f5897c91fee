"""``uptime login|logout|whoami|refresh``: sessions and who you are."""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from uptime_cli import credentials, output
from uptime_cli.client import ApiClient, ApiRefused
from uptime_cli.commands.options import JsonFlag
from uptime_cli.context import REFUSED, UNREACHABLE, USAGE, CliError, CliState, state
from uptime_cli.login import DEFAULT_TIMEOUT, LoginDenied, LoginTimeout, has_display, loopback_login


def register(app: typer.Typer) -> None:
    app.command()(login)
    app.command()(logout)
    app.command()(whoami)
    app.command()(refresh)


def login(
    ctx: typer.Context,
    provider: Annotated[
        str, typer.Option(help="Sign-in provider configured on the server: github, google or NAME.")
    ] = "github",
    no_browser: Annotated[
        bool, typer.Option("--no-browser", help="Print the sign-in URL instead of opening it.")
    ] = False,
    local: Annotated[
        bool,
        typer.Option(
            "--local", help="Mint a session straight in this machine's database (embedded setup)."
        ),
    ] = False,
    email: Annotated[str | None, typer.Option(help="With --local: the user's email.")] = None,
    name: Annotated[str | None, typer.Option(help="With --local: name for a new user.")] = None,
    with_token: Annotated[
        bool, typer.Option("--with-token", help="Read a session token from stdin.")
    ] = False,
    timeout: Annotated[
        float, typer.Option(help="Seconds to wait for the browser sign-in.", min=0.1)
    ] = DEFAULT_TIMEOUT,
) -> None:
    """Sign in and save the session for this server."""
    st = state(ctx)
    _refuse_with_api_token(st, "sign in: unset it first")
    if local and with_token:
        raise typer.BadParameter("use either --local or --with-token", param_hint="'--local'")
    if (email or name) and not local:
        raise typer.BadParameter("--email and --name go with --local", param_hint="'--email'")
    if local:
        creds = _local_login(st, email, name)
    elif with_token:
        creds = _token_login(st)
    else:
        creds = _browser_login(st, provider, open_browser=not no_browser, timeout=timeout)
    credentials.save(creds)
    output.success(f"Logged in as {creds.user.get('email')} on {creds.server}")


def _refuse_with_api_token(st: CliState, what: str) -> None:
    """Session commands make no sense while UPTIME_TOKEN chooses the credential."""
    chosen = st.credential()
    if chosen is not None and chosen.kind == "token":
        raise CliError(f"{credentials.TOKEN_ENV} is set, so commands use that API token; to {what}")


def _browser_login(st: CliState, provider: str, *, open_browser: bool, timeout: float) -> Any:
    client = st.client(session="")
    _check_provider(client, st.server, provider)

    def announce(url: str, opened: bool) -> None:
        if opened:
            output.info("Opening the sign-in page in your browser. If it does not open, visit:")
        else:
            output.info("Open this URL in a browser to sign in:")
        output.err().print(output.printable(url), soft_wrap=True, markup=False)
        output.info("Waiting for the sign-in to complete (Ctrl-C to cancel)…")

    try:
        data = loopback_login(
            client,
            provider,
            open_browser=open_browser and has_display(),
            timeout=timeout,
            announce=announce,
        )
    except LoginTimeout as exc:
        raise CliError(f"sign-in timed out: {exc}", UNREACHABLE) from None
    except LoginDenied as exc:
        raise CliError(f"sign-in failed: {exc}") from None
    if not data.get("session"):
        raise CliError("the server's exchange answer carried no session")
    return credentials.Credentials(
        server=st.server,
        session=data["session"],
        expires_at=data.get("expires_at"),
        provider=(data.get("user") or {}).get("provider") or provider,
        user=_who(data.get("user") or {}),
    )


def _check_provider(client: ApiClient, server: str, provider: str) -> None:
    """Fail now, not after the timeout, if the browser would only find PROVIDER_NOT_FOUND."""
    try:
        client.check_login_provider(provider)
    except ApiRefused as exc:
        if exc.code != "PROVIDER_NOT_FOUND":
            raise
        configured = "; ".join(str(p) for p in exc.details.get("provider") or [])
        raise CliError(
            f"{server} has no sign-in provider {provider!r}"
            + (f" ({configured})" if configured else "")
            + "; choose one with --provider NAME",
            REFUSED,
        ) from None


def _token_login(st: CliState) -> credentials.Credentials:
    if sys.stdin.isatty():
        output.info("Paste a session token, then press Ctrl-D:")
    token = sys.stdin.read().strip()
    if not token or any(ch.isspace() for ch in token):
        raise CliError("expected one session token on stdin", USAGE)
    if token.startswith("upt_"):
        raise CliError(
            f"that is an API token, not a session: set {credentials.TOKEN_ENV} to it instead",
            USAGE,
        )
    user = st.client(session=token).get_user().get("data") or {}
    return credentials.Credentials(
        server=st.server, session=token, provider=user.get("provider"), user=_who(user)
    )


def _local_login(st: CliState, email: str | None, name: str | None) -> credentials.Credentials:
    from peewee import PeeweeException

    from uptime_server.auth.local_users import LOCAL_PROVIDER, mint_local_session
    from uptime_server.config import ConfigError, load_settings
    from uptime_server.daemon.process import prepare

    email = email or typer.prompt("Email")
    try:
        settings = prepare(load_settings())
        token = mint_local_session(settings, email=email, name=name)
    except ConfigError as exc:
        raise CliError(f"configuration error: {exc}") from None
    except ValueError as exc:
        raise CliError(str(exc), USAGE) from None
    except (PeeweeException, OSError) as exc:
        raise CliError(f"cannot use the local database ({exc}); is it on this machine?") from None
    server = st.server if st.server_is_explicit else credentials.normalise_server(settings.base_url)
    user, expires_at = _session_owner(token)
    return credentials.Credentials(
        server=server, session=token, expires_at=expires_at, provider=LOCAL_PROVIDER, user=user
    )


def _session_owner(token: str) -> tuple[dict[str, Any], str]:
    from uptime_server.auth.sessions import hash_token
    from uptime_server.clock import isoformat
    from uptime_server.db import database
    from uptime_server.models import Session, User

    with database.connection_context():
        row = (
            Session.select(Session, User)
            .join(User)
            .where(Session.token_hash == hash_token(token))
            .get()
        )
    return _who({"id": row.user.id, "email": row.user.email, "name": row.user.name}), isoformat(
        row.expires_at
    )


def _who(user: dict[str, Any]) -> dict[str, Any]:
    return {k: user.get(k) for k in ("id", "email", "name")}


def logout(ctx: typer.Context, json_: JsonFlag = False) -> None:
    """Revoke the session on the server and forget it here."""
    st = state(ctx)
    _refuse_with_api_token(
        st, "log out of a saved session, unset it; to end the token, `uptime tokens revoke ID`"
    )
    chosen = st.credential()
    if chosen is None:
        raise CliError(f"not logged in to {st.server}")
    from_env = chosen.source == credentials.SESSION_ENV
    try:
        response = st.client().logout()
    except ApiRefused as exc:
        if exc.status != 401:
            raise
        response = {"message": "Session had already ended"}
        output.warn("the server no longer knew this session")
    if not from_env:
        credentials.delete(st.server)
    if st.wants_json(json_):
        output.print_json(response)
    output.success(f"Logged out of {st.server}")
    if from_env:
        output.info("The token came from UPTIME_SESSION; unset it too.")


def whoami(ctx: typer.Context, json_: JsonFlag = False) -> None:
    """Show the signed-in user, and the team and role commands act with."""
    st = state(ctx)
    user = st.client().get_user().get("data") or {}
    if st.wants_json(json_):
        output.print_json(user)
        return
    if user.get("provider") is None:  # the server's answer to an API token
        user = {**user, "provider": f"an API token ({credentials.TOKEN_ENV})"}
    output.out().print(output.user_view(user, st.server))


def refresh(ctx: typer.Context, json_: JsonFlag = False) -> None:
    """Extend the session's lifetime (sessions slide; this renews now)."""
    st = state(ctx)
    _refuse_with_api_token(st, "refresh a session, unset it (API tokens are not refreshed)")
    response = st.client().refresh_session()
    saved = credentials.load(st.server)
    if saved is not None and st.credential().source == "saved":
        saved.expires_at = response.get("expires_at")
        credentials.save(saved)
    if st.wants_json(json_):
        output.print_json(response)
    output.success(f"Session valid until {output.when(response.get('expires_at'))}")
