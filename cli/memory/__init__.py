"""The ``memory``, ``graph``, ``log`` and ``wiki`` commands."""
