"""A LlamaIndex query engine over ragsift's retriever.

    python examples/llamaindex_query_engine.py --kb ragsift-demo-kb "How do I reset the hub?"

RetrieverQueryEngine(ragsift's retriever, an LLM) -> an answer with its source nodes. The LLM
is the packaged Qwen run in process by ragsift, wrapped as a LlamaIndex CustomLLM.
"""
from __future__ import annotations

from typing import Any

from llama_index.core.llms import CompletionResponse, CompletionResponseGen, CustomLLM, LLMMetadata
from llama_index.core.query_engine import RetrieverQueryEngine

from _common import arguments, model, open_kb, run
from ragsift.integrations.llamaindex import RagsiftRetriever


class RagsiftLLM(CustomLLM):
    """ragsift's model client as a LlamaIndex LLM."""

    client: Any
    max_tokens: int = 200

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(context_window=4096, num_output=self.max_tokens, model_name=self.client.name)

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text=self.client.generate([{"role": "user", "content": prompt}],
                                                            max_tokens=self.max_tokens))

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        yield self.complete(prompt)


def main() -> None:
    args = arguments(__doc__)
    retriever = RagsiftRetriever(open_kb(args), k=2)
    engine = RetrieverQueryEngine.from_args(retriever, llm=RagsiftLLM(client=model(args), max_tokens=args.max_tokens))
    response = engine.query(args.question)
    for n in response.source_nodes:
        similarity = "unknown" if n.score is None else f"{n.score:.3f}"  # the node score: the dense similarity
        print(f"source: {n.node.metadata['source']} › {n.node.metadata['heading']} (similarity {similarity})")
    print("answer:", str(response).strip())


if __name__ == "__main__":
    run(main)
