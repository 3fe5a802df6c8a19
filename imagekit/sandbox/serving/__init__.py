"""Processes that serve the sandbox: the one ``start`` sequence, listening ``sockets`` and the
``workers`` of ``serve --workers``.

It imports ``api`` and everything below it; only the face (``imagekit.sandbox``) and the command
line import it.
"""
