"""Model wrappers: embedders (and later rerankers and LLM clients)."""
