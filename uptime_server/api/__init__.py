"""The JSON API: one Flask blueprint per resource, each view thin.

A view parses its input (a pydantic model of ``schemas``, or
``wsgi.query_params`` for a query string), calls a function of ``services`` (or
a model query, for a plain read), and serialises the answer through
``schemas``. A failure is an ``errors.ApiError``, written by ``wsgi``'s one error
writer. ``@documented`` (``wsgi.operations``) beside each view feeds the OpenAPI
document (``openapi``); ``wsgi.access`` marks say who may call a view (public,
session only, admin) and the app's guards enforce them. ``agent`` is the probe
agents' own API; ``signin`` and ``auth`` the sign-in redirects and sessions.

Speed tricks: answers are written by pydantic's serialiser straight to JSON
bytes; the hottest URLs (pings, a fresh /healthz, cached public pages) are
answered by ``fast_paths`` before a request reaches these blueprints.
"""
