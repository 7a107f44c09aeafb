"""The ``feral`` command line: a thin face over :class:`node.node.Node`."""
