"""uptime: a self-hosted uptime monitor (the daemon).

The root holds the application factory (``app``) and the foundation every
package may use: settings (``config``), injected time (``clock``), the API's
error type (``errors``), private files (``files``), email syntax, printable
text and the garbage-collection policy (``gc_policy``). Everything else lives
in a package named for the idea it owns, in layers that import only earlier
ones (``tests/test_layering.py``): the root and ``net``, then ``db``, ``models``
and ``migrations``, ``checks``, ``auth``, ``stats``, ``notify`` and ``maintenance``,
``heartbeats``, ``engine``, ``schemas``, ``services`` and ``wsgi``, ``web``,
``fast_paths``, ``api``, ``app``, and ``daemon`` last. ``probe_agent`` imports
only the foundation, ``checks`` and the engine's probes.
"""

__version__ = "0.1.0"
