"""The school's gradebook exports: reading score sheets and summarising them for the term report."""
