"""Vectors for episodes and facts: derived float32 BLOBs, and the matrix searched in memory."""
