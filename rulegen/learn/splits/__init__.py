"""How a tree grows: the shared builder, impurity criteria, categorical subsets, presorted
row orders, and LightGBM's bins and histogram split finding."""
