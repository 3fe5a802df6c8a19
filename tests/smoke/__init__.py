"""Install smoke checks: scripts CI runs in venvs holding only the core or only ``[sandbox]``."""
