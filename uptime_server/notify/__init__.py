"""Notification delivery: alert messages, transports, the outbox and the delivery loop.

``message`` renders an alert (email, Slack text); ``transports`` sends it (SMTP,
.eml files, Slack) and types its failures, with ``webhook_http`` for the guarded
POST and ``senders`` choosing transports from the settings; ``outbox`` is the
rows a state change leaves behind; ``delivery`` claims those rows, sends them
and retries a ``TemporaryDeliveryError`` after ``transports.backoff_delay``.
``channels`` sends to a user's named channels (email, Slack, webhook,
PagerDuty, Apprise; docs/channels.md), through the same outbox.

Speed tricks: delivery claims one due row at a time with ``SKIP LOCKED`` on
PostgreSQL, so several daemons send in parallel without waiting on each
other's rows.
"""
