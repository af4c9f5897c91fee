"""Run the test authorization servers on loopback ports chosen by the OS.

Prints one JSON line ``{"github": URL, "oidc": URL}`` once both listen, then
serves until its standard input closes (the test session ending, or dying).
"""

from __future__ import annotations

import json
import logging
import sys
import threading

from werkzeug.serving import make_server

from tests.auth.servers import github, oidc


def main() -> None:
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    servers = {
        "github": make_server("127.0.0.1", 0, github.create_app(github.GitHubStore()), True),
        "oidc": make_server("127.0.0.1", 0, oidc.create_app(oidc.Store()), True),
    }
    for server in servers.values():
        threading.Thread(target=server.serve_forever, daemon=True).start()
    urls = {name: f"http://127.0.0.1:{s.server_port}" for name, s in servers.items()}
    print(json.dumps(urls), flush=True)
    sys.stdin.read()
    for server in servers.values():
        server.shutdown()


if __name__ == "__main__":
    main()
