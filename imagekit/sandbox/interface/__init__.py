"""What the interface says, and nothing of how the sandbox serves it.

- ``schemas``: the wire schemas, written from the spec (not shared with the client's models);
- ``errors``: every error name with its status, ``SandboxError``, and the spec's error body;
- ``extensions``: what the default face adds to the interface (credit headers, ``seed``, fields).

It imports no other part of the sandbox, and neither FastAPI nor SQLAlchemy: every layer may import it.
"""
