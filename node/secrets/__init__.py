"""Secrets refused before anything is stored: the patterns, the phrases, the scan."""
