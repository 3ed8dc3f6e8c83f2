"""The static blog generator's URL helpers."""
