"""Retrieval: channels, fusion, parent expansion and packing, the query pipeline."""
