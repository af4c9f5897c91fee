"""The running process: the API server and the engine's loops, wired together.

``process`` builds the components the options ask for (the check scheduler
with its database worker, delivery, reminders, housekeeping, the metrics
refresher), runs the API through ``wsgi.server``, and handles SIGTERM and cron
mode (``check --once``); ``daemon.loops`` runs each component's ``loop(now)`` in its
own thread, sleeping on a stop event, with one log line per database outage.

Speed tricks: once start-up is done the process freezes what it made out of
the cycle collector's walks and raises its threshold (``gc_policy``).
"""
