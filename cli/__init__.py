"""The ``feral`` command line: a thin face over :class:`feral.node.node.Node`."""
