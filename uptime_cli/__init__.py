"""The `uptime` command line."""
