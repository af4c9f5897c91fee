"""One probe per monitor type, behind one interface: an attempt function per type.

``registry`` says which module checks which type; ``tcp``, ``udp``, ``dns`` and
``icmp`` (ping: ICMP echo) each make one attempt and judge it; http and https
are ``engine.probe``'s own, and a heartbeat's verdict is
``heartbeats.verdict``. The retry loop around an attempt is ``engine.probe``'s.
"""
