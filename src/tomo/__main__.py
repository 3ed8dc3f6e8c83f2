"""`python -m tomo` is the same as the `tomo` console script (tests use it to avoid PATH surprises)."""

from tomo.cli import main

main()
