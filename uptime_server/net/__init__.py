"""Outbound network policy shared by probes and notification channels."""
