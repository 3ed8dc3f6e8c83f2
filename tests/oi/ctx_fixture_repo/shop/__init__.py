"""A tiny shop: the context pack's fixture repository (the right answer to each test task is known)."""
