"""Importers: build a rulegen IR Model from models trained by other libraries."""
