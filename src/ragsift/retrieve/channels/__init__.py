"""Retrieval channels: one protocol (``base.Channel``), one registry (``CHANNELS``), and the
built-in channels, each in its own module:

| channel | module | searches |
|---|---|---|
| ``dense``, ``dense:<extra embedder>`` | ``dense`` | the question's vector |
| ``bm25`` | ``bm25`` | the question's analyzer terms |
| ``sparse`` | ``sparse`` | the question's learned sparse vector |
| ``keywords`` | ``keywords`` | the question's terms against key-phrase entries |
| ``entities`` | ``entities`` | the question's named entities against entity entries |
| ``hyde``, ``hyde_bm25`` | ``hyde`` | a hypothetical answer written by the model |
| ``multi_query`` | ``multi_query`` | queries written by the model, fused |
| ``engine_hybrid`` | ``engine`` | dense and BM25 fused by Milvus itself (``store_fusion = "engine"``) |

A new channel is a module with a ``Channel`` subclass registered by ``@register_channel(name)``,
imported below (the order of the imports is the order channels are listed in).
"""
# importing a channel module registers its channels; this order is the order they are listed in
# isort: off
from ragsift.retrieve.channels import dense  # noqa: F401
from ragsift.retrieve.channels import bm25  # noqa: F401
from ragsift.retrieve.channels import hyde  # noqa: F401
from ragsift.retrieve.channels import multi_query  # noqa: F401
from ragsift.retrieve.channels import keywords  # noqa: F401
from ragsift.retrieve.channels import entities  # noqa: F401
from ragsift.retrieve.channels import sparse  # noqa: F401
from ragsift.retrieve.channels import engine  # noqa: F401
# isort: on
from ragsift.retrieve.channels.base import (
                                            CHANNELS,
                                            Channel,
                                            ChannelContext,
                                            ChannelRegistry,
                                            LLMChannel,
                                            register_channel,
)

__all__ = ["CHANNELS", "Channel", "ChannelContext", "ChannelRegistry", "LLMChannel", "register_channel"]
