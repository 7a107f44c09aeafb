"""The protocol's event handler: what one link does with each event of its session, and what it
knows of peers."""
