"""The delta log, the version vector, erasure, integrity, snapshots and pruning."""
