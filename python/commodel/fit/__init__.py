"""Fitting platform files from the results database."""
