"""Persistence shared by the engines and the console: one SQLAlchemy engine per URL, SQLite by default.

``db.connect(url)`` is the only place that knows how to open a store; each part keeps its own tables in its own
module here (``jobs`` for team, ``console`` for the web console) so the console reads the same rows the team writes.
"""
