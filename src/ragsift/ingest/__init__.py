"""Ingestion: load files into documents, split them into parents and children."""
