"""Pydantic models of what the API takes and gives: request bodies and responses.

The OpenAPI document (``uptime_server.api.openapi``) takes its schemas from
these models, and the views serialise through them, so the document and the
answers cannot drift apart. Modules here import nothing from ``api/``.

Speed tricks: responses are written by pydantic straight to JSON bytes
(``base.json_response``), and the monitor list's summaries without a model
each (``monitors.summary_json``).
"""
