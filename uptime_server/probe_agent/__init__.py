"""The probe agent: runs one location's checks anywhere that reaches the server over HTTP.

It needs no database: it claims checks through the agent API (``client``),
runs them with the engine's probes (``runner``), keeps results on disk while
the server is away (``buffer``) and posts them back; a connectivity
``canary`` keeps the agent's own network outages from counting
(docs/agents.md). It imports only the foundation, ``checks`` and the
engine's probing parts, so it carries neither Flask nor a database driver.

Speed tricks: results go back in batches, one file and one request per
batch, not per result.
"""
