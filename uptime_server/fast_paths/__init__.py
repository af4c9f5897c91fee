"""Answers before Flask: heartbeat pings, a fresh ``/healthz``, cached badges and status pages.

Each fast path has one method, ``answer(environ)``: the whole ``Answer``
(``wsgi.types``), or ``None`` for Flask to answer. ``dispatch.FastPaths``
wraps ``app.wsgi_app``, so waitress and Flask's test client both reach the
fast paths, and asks only the one that owns the request's first path
segment. ``pings`` is the only ping route (there is no Flask twin: it
answers every method, body and error of ``/ping/...`` itself, through the
one error writer); ``health`` serves the view's remembered healthy answer
while it is fresh and hands the rest to ``api/health.py``; ``public_pages``
serves hits of the render cache and hands misses to ``web/public.py``.
Each is tested byte for byte against Flask's answer (``tests/fast_paths``).

Speed tricks: a request for a fast path skips Flask's whole request
machinery (request context, URL map, flask-login's and flask-limiter's
hooks, the session); the dispatcher finds the path by one dict lookup of
the first path segment; a ping is parsed from the raw environ, its body read
only up to the kept message, and its rate limit counted with the limiter's
own storage; error bodies and status lines are written once per kind and
kept; a healthy ``/healthz`` is serialised once per remembered answer; a
cached page is sent from the render cache's bytes (gzipped once), with the
``Date`` header formatted once a second.
"""
