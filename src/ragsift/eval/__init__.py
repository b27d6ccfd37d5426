"""Evaluation: BEIR-format datasets (``datasets``), document-level metrics (``metrics``), the
ablation runner behind ``ragsift eval`` and ``ragsift compare`` (``runner``), paired
significance tests (``stats``) and ``ragsift tune``, which learns a knowledge base's fusion
settings from questions (``tune``)."""
