"""Retrieval: a question to passages. The pipeline (``pipeline.Retriever``) runs a search round
(``search``: the channels in parallel, ``channels`` and ``runner``, with the LLM steps they
share, ``steps`` and ``transforms``; fusion, ``fusion``; reranking, ``rerank``), turns the ranked
units into candidates (``units``, with ``whole`` for sections searched whole), packs them into
the token budget (``packing``) and highlights their sentences (``highlight``); ``multihop``
runs rounds in a loop, ``strategy`` names the combinations and routes a question to one,
``offer`` says what a caller may choose on a knowledge base."""
