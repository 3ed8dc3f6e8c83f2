"""tomo: a harness that lets any chat model work on a code base while the harness keeps the discipline."""

__version__ = "0.1.0"
