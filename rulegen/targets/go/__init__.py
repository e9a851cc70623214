"""The Go target: ``target.py`` (GoTarget: forms, the package, the API), ``trees.py`` (Go's
spelling of the nested/goto/blend bodies of :mod:`rulegen.targets.brace_trees`), ``table.py``
(the table form: 8 branch-free chains)."""
