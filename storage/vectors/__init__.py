"""Vectors for episodes and facts: the derived sqlite-vec tables and the in-memory index."""
