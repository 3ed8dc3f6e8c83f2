"""Order checkout for the web store."""
