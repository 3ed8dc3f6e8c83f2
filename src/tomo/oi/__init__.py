"""The oi engine: the model writes fenced code, tomo runs it in the sandbox, and gates decide when an edit is verified.

``context_pack`` (the task's symbols anchored in prism before the first round) lives here too, as the engine's
preamble; it is also a product of its own (``tomo context-pack``).
"""
