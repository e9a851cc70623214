"""The Rust target: ``target.py`` (RustTarget: the module, the API), ``table.py`` (16-byte rows
for numeric trees, node rows for the rest)."""
