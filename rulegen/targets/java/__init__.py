"""The Java target: ``target.py`` (JavaTarget: the class, the API), ``table.py`` (node tables
encoded as string literals and decoded at class load: no method or constant-pool limit)."""
