"""Probes for the monitor types other than http: one module per type."""
