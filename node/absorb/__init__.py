"""Absorbing text: clauses phrased as facts, compared with what is stored, and the outcome
written."""
