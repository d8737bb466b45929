"""Domain rules: pure Python, no Qt, no SQLAlchemy (checked by import-linter)."""
