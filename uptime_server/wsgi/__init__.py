"""The HTTP plumbing under Flask: what a WSGI answer is, the server, and the one error writer.

``types`` names the WSGI callables and the ``Answer`` a fast path gives, with
the limits and headers every answer shares; ``errors`` writes every error
body, whoever answers (Flask's error handlers, the fast paths, waitress's
own refusals); ``server`` is waitress as the daemon runs it.
"""
