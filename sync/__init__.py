"""The pure core of feral: clocks, deltas, the LWW decision, the codec and the schema.

Nothing in this package performs I/O: no asyncio, no SQLite, no sockets, no click.
Time and randomness are passed in, so simulations can drive the same code as the node.
"""
