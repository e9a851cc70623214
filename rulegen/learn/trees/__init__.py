"""Single-tree learners (CART, C4.5, ID3, CHAID, QUEST) and the pruning and surrogate
splits they share."""
