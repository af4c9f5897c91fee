"""Maintenance windows: when one is open, and which monitors it covers.

``recurrence`` walks recurring times (an RFC 5545 RRULE, a cron expression)
under a hard budget of steps, so no rule a user writes can stall the server;
``schedule`` says from a window's schedule alone whether it is open at a time
(pure); ``windows`` reads the windows of some users and says which monitors
are in maintenance now. The engine asks ``windows`` before it alerts, the
services before they answer, the status pages before they show a monitor.

Speed tricks: a rule is walked from the start of its own period at or before
the time asked (its anchor), not from its DTSTART, and every walk is bounded
by a horizon and a budget of steps (``recurrence``).
"""
