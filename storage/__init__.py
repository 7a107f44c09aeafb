"""SQLite storage: migrations, the replicated tiers, the delta log, search and export.

Domain logic is written as plain synchronous ``fn(conn, ...)`` functions (datasette's pattern), so
SQL is testable without an event loop; :class:`feral.storage.store.Store` runs them on the
connection's own thread, every write under one lock and ``BEGIN IMMEDIATE``.
"""

from feral.sync.schema import freeze

freeze()  # storage builds its SQL from the registry once: no schema extension after this
