"""Evaluation: BEIR-format datasets, metrics, runs."""
