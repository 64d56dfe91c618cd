"""One module per family of formats; each turns decoded text or raw bytes into a ``Parsed``."""
