"""Running a node: ``feral serve``'s service, the resident, their listener and hand-offs."""
