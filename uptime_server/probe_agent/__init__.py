"""The probe agent: runs one location's checks anywhere that reaches the server over HTTP.

It needs no database: it claims checks through the agent API, runs them with
the engine's probes and posts their results back (docs/agents.md).
"""
