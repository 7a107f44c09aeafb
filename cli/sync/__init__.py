"""The ``sync`` commands: peers, invitations, TLS, status, clock-reset."""
