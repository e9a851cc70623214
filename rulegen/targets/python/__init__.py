"""The Python target: ``target.py`` (PythonTarget: the module, its docstring and links),
``body.py`` (what each entry point computes: one tree folded per leaf, several trees walked
inline, float32 sums), ``tree.py`` (a tree as nested ``if``/``else``, split into functions past
CPython's nesting limits)."""
