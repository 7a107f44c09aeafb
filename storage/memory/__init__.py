"""The replicated memories and their meta rows, edges, entities, listings and exports."""
