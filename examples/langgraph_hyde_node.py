"""The HyDE retrieval node of the seed design (../shared/seeds/003: search_embedding_hyde) as a
LangGraph node, with ragsift doing the work: the model writes a hypothetical answer, the
question and the answer are searched together (query+hypothesis), fused with the plain
channels by RRF, within the products named in the state.

    python examples/langgraph_hyde_node.py --kb ragsift-demo-kb "恢复出厂设置要按哪些键？"

The node reads the rewritten query (or the original one) and the item names from the state,
and writes the passages and the hypothesis back; an empty query returns no passages.
"""
from __future__ import annotations

from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph

from _common import arguments, open_kb, run


class QueryState(TypedDict, total=False):
    original_query: str
    rewritten_query: str
    item_names: list[str]
    hyde_passages: list[dict[str, Any]]
    hyde_document: str


def hyde_node(kb, llm: str, max_tokens: int, timeout: float = 300):
    def search_embedding_hyde(state: QueryState) -> QueryState:
        query = (state.get("rewritten_query") or state.get("original_query") or "").strip()
        if not query:
            return {"hyde_passages": [], "hyde_document": ""}
        flt = {"item_name": {"in": state["item_names"]}} if state.get("item_names") else None
        res = kb.query(query, filter=flt, llm_model=llm, channels=["dense", "bm25", "hyde", "hyde_bm25"],
                       hyde_mode="query+hypothesis", hyde_max_tokens=max_tokens, fusion="rrf",
                       channel_timeouts={"hyde": timeout, "hyde_bm25": timeout})
        hyde = res.trace.transforms.get("hyde", {})
        return {"hyde_passages": [{"source": p.source, "heading": p.heading, "score": p.score, "text": p.text}
                                  for p in res.passages],
                "hyde_document": (hyde.get("hypotheses") or [""])[0]}
    return search_embedding_hyde


def main() -> None:
    args = arguments(__doc__)
    graph = StateGraph(QueryState)
    graph.add_node("search_embedding_hyde", hyde_node(open_kb(args), args.llm, args.max_tokens, args.timeout))
    graph.add_edge(START, "search_embedding_hyde")
    graph.add_edge("search_embedding_hyde", END)
    out = graph.compile().invoke({"original_query": args.question, "item_names": ["星云智能音箱 S2"]})
    print("hypothesis:", out["hyde_document"])
    for p in out["hyde_passages"]:
        print(f"passage: {p['source']} › {p['heading']} (score {p['score']:.4f})")


if __name__ == "__main__":
    run(main)
