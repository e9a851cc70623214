"""Optional compiled kernels (numba, ``rulegen[fast]``), bit for bit the numpy code's
results; :mod:`.kernels` loads them."""
