"""Search over stored memories: the FTS5 and vector legs, fusion, ranking, the digest's reads."""
