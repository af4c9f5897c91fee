"""The server's side of probe agents: their tokens, claims, renewals and results."""
