"""The HTTP plumbing under the views: the server, the app's state, guards, limits, errors.

``types`` names the WSGI callables and the ``Answer`` a fast path gives, with
the limits and headers every answer shares; ``errors`` writes every error
body, whoever answers (Flask's error handlers, the fast paths, waitress's
own refusals); ``server`` is waitress as the daemon runs it. ``context`` is the
running app's one typed state (``AppState``) and what a request reads from it
(settings, the clock). ``access`` marks who may call a view and ``operations``
documents it for the OpenAPI document; ``query_params`` turns a query string
into typed values or a VALIDATION_ERROR; ``rate_storage`` is the rate
limiter's storage, ``check_slots`` the "test now" slots, ``read_gate`` lets
API reads into Flask one at a time on SQLite.

Speed tricks: the read gate keeps readers from contending for the GIL and the
embedded database at once; the rate storage expires keys lazily instead of
sweeping every key on a timer.
"""
