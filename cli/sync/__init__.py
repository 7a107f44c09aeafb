"""The ``serve`` and ``sync`` commands: peers, invitations, TLS, status."""
