"""The public face: status pages and badges, rendered on the server with Jinja2, no build step.

``public`` is the blueprint of the public URLs (``/status/{slug}``, its JSON
and the badges); ``page_content`` gathers what a page shows (groups, monitors,
90 days of uptime, maintenance); ``badge_figures`` a badge's label, value and
colour; ``rendering`` the templates and their filters; ``render_cache`` keeps
rendered answers for a short time, one render per burst of visitors. The
services that change what a page or badge shows drop its render after their
commit (``services.render_purges``).

Speed tricks: a render is kept (gzipped too, when large) for a few seconds and
answered by ``fast_paths.public_pages`` before Flask while it is fresh.
"""
