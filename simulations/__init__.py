"""Simulations that drive the real sync/ code through a simulated network."""
