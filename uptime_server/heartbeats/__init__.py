"""Heartbeat monitors: the pings a job sends, and the verdict when none came.

``kinds`` says what a ping path's suffix means (success, start, fail, log, an
exit code); ``schedule`` when a heartbeat monitor expects its next ping (a
period or a cron expression in a time zone, plus grace: pure functions);
``batch`` records a batch of pings at once (their tokens' monitors, their
outcomes, one answer each); ``verdict`` is the "probe" that judges, when a
deadline falls due, that no ping came. Ping tokens are credentials and live
with the other tokens in ``auth.ping_tokens``.

Speed tricks: pings are recorded in batches (group commit, ``engine.ping_sink``),
so a burst of pings costs one transaction, not one each.
"""
