"""``uptime teams ...`` and ``uptime audit``: teams, members, invitations, the audit log.

Every request names its team in ``X-Uptime-Team``: the root's ``--team``, else
``UPTIME_TEAM``, else the default ``uptime teams switch`` saved for the
server (context.CliState.team). The commands about the current team
(``members``, ``invite``, ``role``, ``remove``, ``leave``, ``invitations``,
``revoke``, ``audit``) take a ``--team`` of their own too, and without any
team chosen they act in the one the server reports for the caller in
``GET /auth/user`` (the personal team, or an API token's own).

A saved default that stopped being one of the user's teams (deleted, left)
would make every request fail with TEAM_NOT_FOUND; the commands that name
their team in the path (``list``, ``create``, ``show``, ``switch``,
``join`` ...) then warn and ask again without it, so ``uptime teams switch``
can always repair it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, Any, Literal

import typer
from rich.table import Table

from uptime_cli import credentials, output
from uptime_cli.client import ApiClient, ApiRefused, Json
from uptime_cli.commands.options import JsonFlag
from uptime_cli.context import ERROR, CliError, CliState, state

app = typer.Typer(
    help="Teams: create and switch teams, members and roles, invitations.",
    no_args_is_help=True,
)

Role = Literal["viewer", "member", "admin", "owner"]
TeamArg = Annotated[str, typer.Argument(help="The team's slug (or id).", show_default=False)]
TeamOpt = Annotated[
    str | None,
    typer.Option(
        "--team",
        metavar="SLUG",
        help="The team (slug or id); default: the current team.",
        show_default=False,
    ),
]
UserId = Annotated[int, typer.Argument(help="The member's user id.", min=1, show_default=False)]
SlugOpt = Annotated[
    str | None,
    typer.Option(
        metavar="SLUG",
        help="Lowercase letters, digits and dashes (default: made from the name).",
        show_default=False,
    ),
]
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]

_INVITE_LINK = re.compile(r"/invite/([^/?#\s]+)")


def register(root: typer.Typer) -> None:
    root.command()(audit)


# -- choosing the team --------------------------------------------------------


def current_team(st: CliState, client: ApiClient, local: str | None = None) -> str:
    """The team a command acts on: its --team, the chosen team, else the server's choice."""
    chosen = (local or "").strip() or st.team
    if chosen:
        return chosen
    team = (client.get_user().get("data") or {}).get("team")
    if isinstance(team, dict) and (team.get("slug") or team.get("id") is not None):
        return str(team.get("slug") or team.get("id"))
    raise CliError(f"{st.server} names no current team (a server without teams?); give --team SLUG")


def _scoped(ctx: typer.Context, local: str | None) -> tuple[CliState, ApiClient, str]:
    st = state(ctx)
    client = st.client(team=(local or "").strip() or None)
    return st, client, current_team(st, client, local)


def _tolerant(st: CliState, client: ApiClient, call: Callable[[ApiClient], Json]) -> Json:
    """``call(client)``; if the saved default team is refused, warn and call without it."""
    try:
        return call(client)
    except ApiRefused as exc:
        choice = st.team_choice
        if exc.code != "TEAM_NOT_FOUND" or not choice or choice[1] != "saved":
            raise
        output.warn(
            f"the saved default team {choice[0]!r} is not one of yours any more; "
            "asking without it (change it with `uptime teams switch SLUG`)"
        )
        return call(client.without_team())


def _same_team(a: str | None, team: dict[str, Any], named: str) -> bool:
    """Whether the team reference *a* means *team* (known by *named*, its slug or its id)."""
    if not a:
        return False
    return a in (named, str(team.get("slug") or ""), str(team.get("id") or ""))


def _forget_default(st: CliState, team: dict[str, Any], named: str) -> None:
    """Drop the server's saved default team if it is *team* (deleted or left)."""
    if _same_team(credentials.saved_team(st.server), team, named):
        credentials.save_team(st.server, None)
        output.info(f"{named} was your default team on {st.server}; the default is cleared.")


def _message(response: Json) -> Any:
    """The ``{"message": ...}`` of an answer, under ``data`` as the teams API gives it."""
    data = response.get("data")
    return data if isinstance(data, dict) else response


def invitation_token(raw: str) -> str:
    """The token of an invitation given bare or as its ``.../invite/TOKEN`` link."""
    text = raw.strip()
    if "/" in text:  # a link: tokens are URL-safe, without slashes
        match = _INVITE_LINK.search(text)
        text = match.group(1) if match else ""
    if not text or any(ch.isspace() for ch in text):
        raise typer.BadParameter(
            f"expected an invitation token or link, got {raw!r}", param_hint="'TOKEN_OR_LINK'"
        )
    return text


# -- views -------------------------------------------------------------------


def team_view(t: dict[str, Any]) -> Table:
    rows = [
        ("Slug", t.get("slug")),
        ("Your role", t.get("role") or "none (server admin)"),
        ("Members", t.get("members")),
        ("Personal", bool(t.get("personal"))),
        ("Created", output.when(t.get("created_at"))),
    ]
    return output.key_values(f"Team {t.get('id')}: {t.get('name')}", rows)


def teams_table(items: list[dict[str, Any]], current: str | None) -> Table:
    table = Table(box=None, header_style="bold", pad_edge=False)
    for name in ("", "ID", "SLUG", "NAME", "ROLE", "MEMBERS", "PERSONAL", "CREATED"):
        table.add_column(name, justify="right" if name in ("ID", "MEMBERS") else "left")
    for t in items:
        mark = "*" if current and _same_team(current, t, str(t.get("slug") or "")) else ""
        table.add_row(
            mark,
            output.cell(t.get("id")),
            output.cell(t.get("slug")),
            output.cell(t.get("name")),
            output.cell(t.get("role") or "-"),
            output.cell(t.get("members")),
            output.cell(bool(t.get("personal"))),
            output.cell(output.short_when(t.get("created_at"))),
        )
    return table


def members_table(items: list[dict[str, Any]]) -> Table:
    table = Table(box=None, header_style="bold", pad_edge=False)
    for name in ("USER ID", "NAME", "EMAIL", "ROLE", "JOINED"):
        table.add_column(name, justify="right" if name == "USER ID" else "left", overflow="fold")
    for m in items:
        table.add_row(
            output.cell(m.get("user_id")),
            output.cell(m.get("name")),
            output.cell(m.get("email")),
            output.cell(m.get("role")),
            output.cell(output.short_when(m.get("joined_at"))),
        )
    return table


def member_view(m: dict[str, Any]) -> Table:
    rows = [
        ("Email", m.get("email")),
        ("Role", m.get("role")),
        ("Joined", output.when(m.get("joined_at"))),
    ]
    return output.key_values(f"User {m.get('user_id')}: {m.get('name')}", rows)


def _by(ref: Any) -> str:
    """``Alice (1)`` for ``{"id": 1, "name": "Alice"}``."""
    if not isinstance(ref, dict):
        return output.plain(ref)
    return f"{ref.get('name')} ({ref.get('id')})" if ref.get("name") else str(ref.get("id"))


def invitations_table(items: list[dict[str, Any]]) -> Table:
    table = Table(box=None, header_style="bold", pad_edge=False)
    for name in ("ID", "EMAIL", "ROLE", "STATUS", "INVITED BY", "CREATED", "EXPIRES"):
        table.add_column(name, justify="right" if name == "ID" else "left", overflow="fold")
    for i in items:
        table.add_row(
            output.cell(i.get("id")),
            output.cell(i.get("email")),
            output.cell(i.get("role")),
            output.cell(i.get("status")),
            output.cell(_by(i.get("invited_by"))),
            output.cell(output.short_when(i.get("created_at"))),
            output.cell(output.short_when(i.get("expires_at"))),
        )
    return table


def invitation_view(i: dict[str, Any]) -> Table:
    rows = [
        ("Role", i.get("role")),
        ("Status", i.get("status")),
        ("Invited by", _by(i.get("invited_by"))),
        ("Created", output.when(i.get("created_at"))),
        ("Expires", output.when(i.get("expires_at"))),
    ]
    return output.key_values(f"Invitation {i.get('id')}: {i.get('email')}", rows)


def audit_table(items: list[dict[str, Any]]) -> Table:
    table = Table(box=None, header_style="bold", pad_edge=False)
    for name in ("ID", "AT", "ACTOR", "VIA", "ACTION", "TARGET", "DETAILS"):
        table.add_column(name, justify="right" if name == "ID" else "left", overflow="fold")
    for e in items:
        via = e.get("via") if isinstance(e.get("via"), dict) else {}
        target = e.get("target") if isinstance(e.get("target"), dict) else {}
        table.add_row(
            output.cell(e.get("id")),
            output.cell(output.when(e.get("at"))),
            output.cell(_by(e.get("actor"))),
            output.cell(" ".join(str(v) for v in (via.get("type"), via.get("id")) if v) or None),
            output.cell(e.get("action")),
            output.cell(
                " ".join(str(v) for v in (target.get("type"), target.get("id")) if v) or None
            ),
            output.cell(e.get("details") or None),
        )
    return table


# -- teams ---------------------------------------------------------------------


@app.command("list")
def list_(ctx: typer.Context, json_: JsonFlag = False) -> None:
    """Your teams and your role in each (* marks the chosen team)."""
    st = state(ctx)
    items = _tolerant(st, st.client(), lambda c: c.list_teams()).get("data") or []
    if st.wants_json(json_):
        output.print_json({"data": items})
    elif not items:
        output.info("No teams. Create one with: uptime teams create NAME")
    else:
        output.out().print(teams_table(items, st.team))


@app.command()
def create(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The team's name, e.g. Ops.")],
    slug: SlugOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Create a team; you become its owner."""
    st = state(ctx)
    data = _tolerant(st, st.client(), lambda c: c.create_team(name, slug)).get("data") or {}
    done = (
        f"Created team {output.team_label(data)}; act in it with --team {data.get('slug')} "
        f"or `uptime teams switch {data.get('slug')}`"
    )
    output.show(st.wants_json(json_), data, team_view, done=done)


@app.command()
def show(
    ctx: typer.Context,
    team: Annotated[
        str | None,
        typer.Argument(
            help="The team's slug (or id); default: the current team.", show_default=False
        ),
    ] = None,
    json_: JsonFlag = False,
) -> None:
    """One team: its slug, your role, its member count."""
    st = state(ctx)
    client = st.client()
    named = team or current_team(st, client)
    data = _tolerant(st, client, lambda c: c.get_team(named)).get("data") or {}
    output.show(st.wants_json(json_), data, team_view)


@app.command()
def rename(
    ctx: typer.Context,
    team: TeamArg,
    new_name: Annotated[str, typer.Argument(help="The team's new name.", show_default=False)],
    slug: Annotated[
        str | None,
        typer.Option(
            metavar="NEW_SLUG", help="A new slug too (default: it stays).", show_default=False
        ),
    ] = None,
    json_: JsonFlag = False,
) -> None:
    """Rename a team, and change its slug with --slug (owners only)."""
    st = state(ctx)
    fields: dict[str, Any] = {"name": new_name}
    if slug is not None:
        fields["slug"] = slug
    data = _tolerant(st, st.client(), lambda c: c.update_team(team, fields)).get("data") or {}
    saved = credentials.saved_team(st.server)
    if slug is not None and saved and _same_team(saved, {}, team) and data.get("slug"):
        credentials.save_team(st.server, str(data["slug"]))  # keep the default pointing at it
    output.show(
        st.wants_json(json_), data, team_view, done=f"Updated team {output.team_label(data)}"
    )


@app.command()
def delete(
    ctx: typer.Context,
    team: TeamArg,
    yes: YesOpt = False,
    json_: JsonFlag = False,
) -> None:
    """Delete a team with its monitors, channels, pages, windows and tokens (owners only)."""
    st = state(ctx)
    if not yes:
        typer.confirm(
            f"Delete team {team} with all its monitors, channels, status pages, "
            "maintenance windows, tokens and audit log?",
            abort=True,
            err=True,
        )
    response = _tolerant(st, st.client(), lambda c: c.delete_team(team))
    if st.wants_json(json_):
        output.print_json(_message(response))
    output.success(f"Deleted team {team}")
    _forget_default(st, {}, team)


@app.command()
def switch(ctx: typer.Context, team: TeamArg, json_: JsonFlag = False) -> None:
    """Make a team the default for this server (--team and UPTIME_TEAM still win)."""
    st = state(ctx)
    data = _tolerant(st, st.client(), lambda c: c.get_team(team)).get("data") or {}
    credentials.save_team(st.server, team)
    output.show(
        st.wants_json(json_),
        data,
        done=f"Commands on {st.server} now act in team {output.team_label(data)}",
    )
    choice = st.team_choice
    if choice and choice[1] != "saved" and choice[0] != team:
        output.warn(f"{choice[1]} names team {choice[0]!r}, which wins over the default")


@app.command()
def join(
    ctx: typer.Context,
    token_or_link: Annotated[
        str,
        typer.Argument(
            metavar="TOKEN_OR_LINK",
            help="The invitation's token, or the whole link from the email.",
            show_default=False,
        ),
    ],
    json_: JsonFlag = False,
) -> None:
    """Accept an invitation and join its team."""
    st = state(ctx)
    token = invitation_token(token_or_link)
    data = _tolerant(st, st.client(), lambda c: c.accept_invitation(token)).get("data") or {}
    done = (
        f"Joined team {output.team_label(data)} as {data.get('role')}; "
        f"act in it with --team {data.get('slug')} or `uptime teams switch {data.get('slug')}`"
    )
    output.show(st.wants_json(json_), data, team_view, done=done)


# -- members -------------------------------------------------------------------


@app.command()
def members(ctx: typer.Context, team: TeamOpt = None, json_: JsonFlag = False) -> None:
    """The members of the current team and their roles."""
    st, client, named = _scoped(ctx, team)
    items = client.list_members(named).get("data") or []
    if st.wants_json(json_):
        output.print_json({"data": items})
    elif not items:
        output.info(f"Team {named} has no members.")
    else:
        output.out().print(members_table(items))


@app.command()
def invite(
    ctx: typer.Context,
    email: Annotated[str, typer.Argument(help="Who to invite.", show_default=False)],
    role: Annotated[Role, typer.Option(help="The role they get (at most yours).")] = "member",
    team: TeamOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Invite someone by email to the current team (admins; the link is valid 7 days)."""
    st, client, named = _scoped(ctx, team)
    data = client.create_invitation(named, email, role).get("data") or {}
    done = (
        f"Invited {data.get('email') or email} to team {named} as {data.get('role') or role}; "
        f"the emailed link expires {output.when(data.get('expires_at'))}"
    )
    output.show(st.wants_json(json_), data, invitation_view, done=done)


@app.command()
def role(
    ctx: typer.Context,
    user_id: UserId,
    new_role: Annotated[
        Role, typer.Argument(metavar="ROLE", help="viewer, member, admin or owner.")
    ],
    team: TeamOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Change a member's role in the current team (admins; owner only by owners)."""
    st, client, named = _scoped(ctx, team)
    data = client.set_member_role(named, user_id, new_role).get("data") or {}
    done = f"User {user_id} is now {data.get('role') or new_role} in team {named}"
    output.show(st.wants_json(json_), data, member_view, done=done)


@app.command()
def remove(
    ctx: typer.Context, user_id: UserId, team: TeamOpt = None, json_: JsonFlag = False
) -> None:
    """Remove a member from the current team (admins; owners only by owners)."""
    st, client, named = _scoped(ctx, team)
    response = client.remove_member(named, user_id)
    output.show(
        st.wants_json(json_), _message(response), done=f"Removed user {user_id} from team {named}"
    )


@app.command()
def leave(ctx: typer.Context, team: TeamOpt = None, json_: JsonFlag = False) -> None:
    """Leave the current team (its last owner cannot)."""
    st, client, named = _scoped(ctx, team)
    me = client.get_user().get("data") or {}
    if me.get("id") is None:
        raise CliError("the server did not say who you are", ERROR)
    response = client.remove_member(named, int(me["id"]))
    output.show(st.wants_json(json_), _message(response), done=f"Left team {named}")
    _forget_default(st, {}, named)


# -- invitations -----------------------------------------------------------------


@app.command()
def invitations(ctx: typer.Context, team: TeamOpt = None, json_: JsonFlag = False) -> None:
    """The current team's invitations: pending, accepted, expired (admins)."""
    st, client, named = _scoped(ctx, team)
    items = client.list_invitations(named).get("data") or []
    if st.wants_json(json_):
        output.print_json({"data": items})
    elif not items:
        output.info(f"No invitations in team {named}. Invite with: uptime teams invite EMAIL")
    else:
        output.out().print(invitations_table(items))


@app.command()
def revoke(
    ctx: typer.Context,
    invitation_id: Annotated[
        int, typer.Argument(help="The invitation's id.", min=1, show_default=False)
    ],
    team: TeamOpt = None,
    json_: JsonFlag = False,
) -> None:
    """Revoke an invitation of the current team: its link stops working (admins)."""
    st, client, named = _scoped(ctx, team)
    response = client.revoke_invitation(named, invitation_id)
    output.show(
        st.wants_json(json_),
        _message(response),
        done=f"Revoked invitation {invitation_id} of team {named}",
    )


# -- audit -------------------------------------------------------------------------


def audit(
    ctx: typer.Context,
    since: Annotated[
        str | None,
        typer.Option(
            metavar="WHEN", help="Only events since: a span back like 7d, 12h, 30m, or ISO 8601."
        ),
    ] = None,
    actor: Annotated[
        int | None, typer.Option(metavar="USER_ID", help="Only what this user did.", min=1)
    ] = None,
    action: Annotated[
        str | None,
        typer.Option(
            metavar="ACTION",
            help="Only this action (monitor.create), or a family ending in a dot (monitor.).",
        ),
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option(metavar="N", help="At most N events (1-1000; default 100).", min=1, max=1000),
    ] = None,
    team: TeamOpt = None,
    json_: JsonFlag = False,
) -> None:
    """The current team's audit log, newest first (admins)."""
    st, client, named = _scoped(ctx, team)
    items = (
        client.audit(named, since=since, actor=actor, action=action, limit=limit).get("data") or []
    )
    if st.wants_json(json_):
        output.print_json({"data": items})
    elif not items:
        output.info(f"No audit events in team {named} match.")
    else:
        output.out().print(audit_table(items))
