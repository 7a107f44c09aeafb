"""The Model Context Protocol server (``feral mcp`` and ``/mcp``): its tools and resources."""
