"""Alembic migrations of the collection database (packaged so `collect init` can run them)."""
