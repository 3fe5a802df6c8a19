"""Bridges to the tools around an experiment: one module per outside tool, each behind an extra.

    from imagekit.integrations.mlflow import log_batch     # pip install 'imagekit[mlflow]'

Nothing here is imported by ``import imagekit``; a module loads its tool when first called, and
says in one line which extra installs it when it is missing (``imagekit.extras.require``).
An integration takes what it carries out of the notebook (a batch, a chain's result, a ledger) as an
argument: it imports the reports, never the workflows, which call it (a sweep file's MLflow run).
"""
