"""Agents shipped with Cognizes; also an ``adk web`` agents directory (see services.py)."""
