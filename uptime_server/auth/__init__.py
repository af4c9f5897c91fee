"""Who is asking: sessions, OAuth sign-in, sign-up, the CLI hand-off, and every token.

``sessions`` keeps server-side sessions behind the ``session_cookie`` cookie;
``oauth``, ``provider_spec`` and ``provider_profiles`` sign in through OAuth2 and
OpenID Connect providers; ``login_state`` is what a sign-in remembers between
redirect and callback; ``signup`` matches, links or creates the user;
``cli_handoff`` hands a browser sign-in to the command line (RFC 8252);
``auth.local_users`` mints a session with no network path; ``admins`` says who is an
admin; ``teams`` says which team a request acts in and with which role
(``X-Uptime-Team``, roles, token scopes capped by the user's role). Each kind
of token lives here: ``api_tokens`` (scripts and CI),
``agent_tokens`` (probe agents), ``auth.badge_tokens`` (badge URLs) and
``auth.ping_tokens`` (heartbeat URLs). Tokens are stored hashed, except badge
tokens, which grant only what a public badge shows.

Speed tricks: a request's session or token is read with one prepared
statement into a small frozen dataclass, not a model instance.
"""
