"""ragsift: a retrieval engine for RAG.

Small child chunks are searched (dense vectors and BM25, fused); whole parent
sections come back, deduplicated and packed into a token budget, with a trace
of how each was found.

    from ragsift import KnowledgeBase
    kb = KnowledgeBase.open("my-kb")          # created on first use
    kb.ingest("docs/")
    result = kb.query("什么是监督学习？")
    for passage in result.passages:
        print(passage.heading_path, passage.score)
"""
from ragsift.config import Settings
from ragsift.errors import RagsiftError
from ragsift.kb import KnowledgeBase
from ragsift.types import Passage, Result

__all__ = ["KnowledgeBase", "Settings", "Result", "Passage", "RagsiftError"]
__version__ = "0.1.0"
