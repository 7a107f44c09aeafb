"""Links to peers: dialling, invitations, TLS, the guard of each link, and sync status."""
