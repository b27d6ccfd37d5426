"""ragsift's Haystack retriever, where Haystack looks for integrations: a class under
``haystack_integrations`` is on Haystack's deserialization allowlist, so a pipeline holding it
loads with ``Pipeline.loads(pipe.dumps())`` and no extra argument. Also importable as
``ragsift.integrations.haystack.RagsiftRetriever`` (the same class)."""
from haystack_integrations.components.retrievers.ragsift.retriever import RagsiftRetriever

__all__ = ["RagsiftRetriever"]
