"""A LangChain chain that answers from ragsift's passages, citing them.

    python examples/langchain_chain.py --kb ragsift-demo-kb "恢复出厂设置要按哪些键？"

retriever -> context with numbered citations -> prompt -> model -> answer. The model is the
packaged Qwen run in process by ragsift (any LangChain chat model works the same way).
"""
from __future__ import annotations

from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnablePassthrough

from _common import arguments, model, open_kb, run
from ragsift.integrations.langchain import RagsiftRetriever


def cite(docs) -> str:
    return "\n\n".join(f"[{d.metadata['rank']}] {d.metadata['source']} › {d.metadata['heading']}\n{d.page_content}"
                       for d in docs)


def main() -> None:
    args = arguments(__doc__)
    retriever = RagsiftRetriever(kb=open_kb(args), k=2)
    llm = model(args)
    roles = {"system": "system", "human": "user", "ai": "assistant"}
    chat = RunnableLambda(lambda prompt: llm.generate(
        [{"role": roles[m.type], "content": m.content} for m in prompt.to_messages()], max_tokens=args.max_tokens))
    prompt = ChatPromptTemplate.from_messages([
        ("system", "Answer the question from the context only, in the question's language. Cite passages as [n]."),
        ("human", "Context:\n{context}\n\nQuestion: {question}")])
    chain = {"context": retriever | cite, "question": RunnablePassthrough()} | prompt | chat | StrOutputParser()
    docs = retriever.invoke(args.question)
    print("sources:", ", ".join(f"[{d.metadata['rank']}] {d.metadata['source']} › {d.metadata['heading']}" for d in docs))
    print("answer:", chain.invoke(args.question))


if __name__ == "__main__":
    run(main)
