"""Values of an image's ``generationStatus`` (light: handles need them before any model loads)."""

PENDING, COMPLETED, FAILED = "PENDING", "COMPLETED", "FAILED"
