"""The city transit network: stops, routes between them, and fares."""
