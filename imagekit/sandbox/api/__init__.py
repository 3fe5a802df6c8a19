"""The sandbox over HTTP: FastAPI and Starlette.

- ``app``: ``create_app(settings)``, the error handlers; ``middleware``: every ASGI middleware;
- ``deps``, ``callers``: who is asking (API keys, sessions, headers); ``views``, ``image_meta``,
  ``binaries``: the documents and binaries answered; ``routes/``: one router per resource.

It imports the composition root (``service``) and the layers below it, never ``serving``.
"""
