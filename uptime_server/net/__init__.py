"""Outbound network policy shared by probes and notification channels.

``target`` parses what a monitor points at; ``guard`` refuses private and
reserved addresses (the SSRF guard) for every address a connection is made
to, and ``socket_guard`` applies it to libraries that open their own sockets;
``certs`` reads a peer certificate's expiry and identity; ``errors`` turns
outbound HTTP failures into the short error text a check run or a delivery
stores, never quoting what the peer sent.

Speed tricks: an address's verdict is cached (``guard.address_allowed``), so
a check repeats no classification made before.
"""
