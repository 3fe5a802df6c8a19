"""The service's endpoints, one module per resource (users, images, edits, prompts).

Each module holds one request builder and one response parser per endpoint, and the sync and async
namespaces that share them. Nothing is imported here, so ``imagekit.images`` can use ``_media``
without a cycle.
"""
