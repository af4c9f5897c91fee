"""uptime: self-hosted HTTP/HTTPS uptime monitor (daemon)."""

__version__ = "0.1.0"
