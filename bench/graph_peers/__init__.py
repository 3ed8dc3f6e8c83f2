"""Helpers for bench/graph.py: real code to measure on, one driver per peer, and an LSP client for basedpyright.

Each driver runs in its own subprocess (see ``worker``) so peak memory and cold start are per tool, never shared.
"""
