"""The service's endpoints, one module per resource (users, images, edits, prompts).

Each module holds one request builder and one response parser per endpoint, and the sync and async
namespaces that share them. What handles, widgets and workflows share with them (turning pixels,
paths and masks into request values) lives in ``imagekit.media``.
"""
