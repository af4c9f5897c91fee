"""What a view calls: one module per resource, each the work behind its endpoints.

``monitors``, ``monitor_apply`` (monitors as code), ``dependencies`` (the team's
graph of monitor dependencies: checked changes, who is blocked, the deps tree),
``channels``, ``maintenance``,
``notifications``, ``status_pages``, ``teams`` (teams and their members),
``audit`` (the team's audit log), ``agents`` (claims, leases and results of
probe agents) and ``metrics`` (the database figures of /metrics) take the
caller's ``auth.teams.Acting`` (team, role, user, credential) and validated
input, scope every read and write to the team, write in one transaction and
return models or plain values; views only parse and serialise. A service that
changes what a public render shows drops that render after its commit
(``services.render_purges``): no view does.

Speed tricks: the monitor list reads a page of rows with their tags, uptime
figures and whether each is blocked in a fixed number of queries, its
unfiltered pages through prepared statements, and its summaries are written without a model each
(``schemas.monitors.summary_json``); both re-measured in bench/README.md
(#second-copies-re-measured-issue-30).
"""
