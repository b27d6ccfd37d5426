"""A Haystack component over a ragsift knowledge base.

    from haystack import Pipeline
    from ragsift.integrations.haystack import RagsiftRetriever

    pipe = Pipeline()
    pipe.add_component("retriever", RagsiftRetriever("my-kb", k=4))
    out = pipe.run({"retriever": {"query": "恢复出厂设置要按哪些键？",
                                  "filters": {"field": "meta.lang", "operator": "==", "value": "zh"}}})
    out["retriever"]["documents"]        # haystack Documents, best first, with scores
    Pipeline.loads(pipe.dumps())         # serialized with its knowledge base's path; loads as is

``filters`` take Haystack's filter shape or ragsift's filter language; settings are query
settings by flat name. The class lives in ``haystack_integrations.components.retrievers.ragsift``
(shipped with ragsift), where Haystack's deserialization allowlist admits integrations.
"""
from haystack_integrations.components.retrievers.ragsift import RagsiftRetriever

__all__ = ["RagsiftRetriever"]
