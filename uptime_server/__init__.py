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

Speed tricks live in the package whose work they speed up, each named in
that package's docstring; their figures are in bench/README.md.
"""

__version__ = "0.1.0"
