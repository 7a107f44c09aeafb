"""The SQLite file: opening it, its migrations, its errors, the rows' shapes, columns of other
versions."""
