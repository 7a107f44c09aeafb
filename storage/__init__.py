"""SQLite storage: migrations, the replicated tiers, the delta log, search and export.

Domain logic is written as plain synchronous ``fn(conn, ...)`` functions (datasette's pattern), so
SQL is testable without an event loop; :class:`feral.storage.store.Store` runs them on the
connection's own thread, every write under one lock and ``BEGIN IMMEDIATE``.

Which columns each replicated table has is the schema a store was opened with
(``feral.sync.schema.Schema``, kept on its connection: storage/db/connection.py), so
statements are built per schema, when first needed.
"""
