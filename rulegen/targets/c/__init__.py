"""The C target: ``target.py`` (CTarget: forms, files, the API), ``trees.py`` (C's spelling of
the nested/goto/blend bodies of :mod:`rulegen.targets.brace_trees`), ``table.py`` (the table
form: rows walked by one loop, chains of trees), ``rows.py`` (row tables: a one-tree model's
batch, 8 rows at a time), ``packed.py`` (the float profile's packed split rows, for flash),
``profile.py`` (what options change: the float profile's refusals and bounds, positive-only)."""
