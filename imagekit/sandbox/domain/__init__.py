"""The service's rules: what a request does to accounts, credits, images and jobs.

- ``accounts``, ``catalog``, ``seed``: users and keys, the plans and styles, a new folder's contents;
- ``credits``: prices, atomic charges and refunds, grants and limits; ``clock``: the sandbox's time;
- ``generation``, ``editing``, ``references``, ``rendering``: images made, edited, read and served;
- ``jobs``, ``slots``: running work, request ids, cancellation and the plan's concurrency;
- ``recovery``: what a run left unfinished; ``faults``: the injected faults of the controls.
- ``parts``: the parts of the running sandbox each rule reaches (seeding, drawing, editing: the type of
  their ``sandbox`` argument, which names no more than the rule uses).

It imports ``store``, ``interface`` and ``engines`` (never ``api`` or ``serving``, and no FastAPI).
"""
