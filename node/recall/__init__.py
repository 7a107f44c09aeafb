"""Reading memories back: search, the entity graph, the digest, access strength."""
