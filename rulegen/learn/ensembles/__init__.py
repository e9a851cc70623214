"""Ensemble learners: random forests, AdaBoost and the boosting family (gradient,
XGBoost-style, LightGBM-style), with their losses and Newton trees."""
