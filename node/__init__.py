"""The node runtime: identity and settings; later the server, peer clients and ``Node``."""
