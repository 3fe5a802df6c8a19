"""Bridges to the tools around an experiment: one module per outside tool, each behind an extra.

    from imagekit.integrations.mlflow import log_batch     # pip install 'imagekit[mlflow]'

Nothing here is imported by ``import imagekit``; a module loads its tool when first called, and
says in one line which extra installs it when it is missing (``imagekit.extras.require``).
Integrations sit above the workflows and reports they carry out of the notebook; nothing below
them imports them.
"""
