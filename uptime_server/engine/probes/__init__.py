"""One probe per monitor type, behind one interface: an attempt function per type.

``registry`` says which module checks which type; ``tcp``, ``udp``, ``dns`` and
``icmp`` (ping: ICMP echo) each make one attempt and judge it; http and https
are ``engine.probe``'s own, and a heartbeat's verdict is
``heartbeats.verdict``. The retry loop around an attempt is ``engine.probe``'s.

Speed tricks: none of their own; they run on the probe loop's event loop
beside the http probe and share its budget of concurrent checks.
"""
