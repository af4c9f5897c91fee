"""The public face: status pages and badges, rendered on the server with Jinja2, no build step."""
