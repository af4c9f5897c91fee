"""Statistics: roll-ups written with each check, figures read from them, retention.

``rollups`` adds each batch of runs to its monitor's 5-minute, hourly and daily
rows (counts, failures and a response-time histogram), in the recorder's
transaction; ``figures`` reads uptime, response times and percentiles from
those rows, never from raw runs; ``retention`` deletes what is past its keep;
``uptime_cache`` keeps figures between requests until a monitor's
``rollup_version`` or its window moves; ``known_cells`` remembers the roll-up
rows this process has seen committed.

Speed tricks: the uptime cache answers a list page without summing roll-ups
again; on PostgreSQL known cells skip the insert a batch would only have had
ignored.
"""
