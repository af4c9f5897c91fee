"""``python -m uptime_cli``: the same as the ``uptime`` command."""

from uptime_cli.main import main

main()
