"""``feral.Memory``: the Python library's face of a node."""
