"""Settings: ``HOME/settings.json`` read and checked, and the bounds every request is held to."""
