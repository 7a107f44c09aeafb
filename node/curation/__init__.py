"""Curating what is stored: boosts, pruning, conflicts, links between memories, the wiki, the prompt
files."""
