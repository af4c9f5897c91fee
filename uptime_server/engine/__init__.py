"""The check engine: claims due checks, runs them, and records what they found.

One check's walk through the modules: ``scheduler``'s ``loop(now)`` has the
``dispatcher`` name a claim of due checks, which its ``Claims`` make (in the
daemon the ``worker``'s ``DatabaseWorker``, a child process; tests and cron
mode an ``InProcess``): a conditional update that moves the monitor's due time
on and takes its lease. ``spec`` builds the ``checks.types.CheckSpec`` from the
row, and the ``probe_loop`` runs it on its asyncio loop through ``probe`` (http,
https) or the type's module in ``probes`` (tcp, udp, dns, icmp; heartbeats have
``heartbeats.verdict``). The finished run goes to the ``writer`` thread, which
batches runs for its ``Records`` (the same worker): the ``recorder`` reads the
batch's monitors (``recorder_sql``), applies ``checks.state``'s pure transition
to each, and writes the run, the new state, any notification with its outbox
rows, the roll-ups and the released lease in one transaction. The
``notify.delivery`` loop then sends the outbox. ``ping_sink`` records heartbeat
pings the same way (group commit); ``reminders`` queue reminders of open
downtimes; ``housekeeping`` runs purges and retention; ``health`` and
``counters`` say how the engine is doing, for /healthz and /metrics.

Speed tricks: claims and writes run in the database worker's child process,
on the other core, with a small import closure (a test checks it); the
recorder works set-wise (a batch is a handful of statements); a check that
hangs is parked so it stops holding a slot; the probes share one HTTP client
and one TLS context per verification mode.
"""
