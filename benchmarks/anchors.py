"""Side-by-side benchmark of the "anchor" retrieval stacks users would otherwise pick.

Runs LangChain and LlamaIndex retrievers over a BEIR folder with ragsift's own loader, metrics
and embedding model, so the only difference from ragsift is the retrieval stack itself. The
anchors live in a separate virtual environment (never dependencies of ragsift)::

    python3 -m venv .venv-anchors
    .venv-anchors/bin/pip install -e .
    .venv-anchors/bin/pip install -r benchmarks/requirements-anchors.txt
    .venv-anchors/bin/python benchmarks/anchors.py --dataset ../shared/datasets/scifact \\
        --out results.json [--max-docs N] [--max-queries N] [--systems a,b] [--scale N]

Systems (all retrieve k=10 documents per query):

- ``langchain-ensemble``: EnsembleRetriever over BM25Retriever (rank_bm25, default
  whitespace preprocessing) and a FAISS vector store, weights 0.5/0.5 (weighted RRF, c=60).
- ``langchain-parent``: ParentDocumentRetriever: children cut by RecursiveCharacterTextSplitter
  (400 characters, its default overlap) in FAISS, whole documents in an InMemoryStore.
- ``llamaindex-fusion``: QueryFusionRetriever over a VectorStoreIndex retriever and
  llama-index-retrievers-bm25 (bm25s), reciprocal rerank, one query (no LLM).

Every vector comes from ragsift's ``minilm`` model, through the two adapters below. Document
(and child-chunk) vectors are computed once and cached as ``.npy`` next to ``--out``, keyed by
a hash of the texts embedded, and handed to the stores precomputed.

``--scale N`` replaces the corpus with N synthetic documents (words drawn from the real
corpus's vocabulary, clustered random unit vectors) and reports only query latency, to show
how each stack's query time grows with corpus size.
"""
from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import importlib.metadata
import json
import re
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from harness import load_dataset, write_result

warnings.filterwarnings("ignore", category=DeprecationWarning)  # langchain-community's sunset notice

from langchain_classic.retrievers import EnsembleRetriever, ParentDocumentRetriever  # noqa: E402
from langchain_community.retrievers import BM25Retriever as LCBM25Retriever  # noqa: E402
from langchain_community.vectorstores import FAISS  # noqa: E402
from langchain_core.documents import Document  # noqa: E402
from langchain_core.embeddings import Embeddings  # noqa: E402
from langchain_core.stores import InMemoryStore  # noqa: E402
from langchain_text_splitters import RecursiveCharacterTextSplitter  # noqa: E402
from llama_index.core import Settings, VectorStoreIndex  # noqa: E402
from llama_index.core.embeddings import BaseEmbedding  # noqa: E402
from llama_index.core.retrievers import QueryFusionRetriever  # noqa: E402
from llama_index.core.schema import TextNode  # noqa: E402
from llama_index.retrievers.bm25 import BM25Retriever as LIBM25Retriever  # noqa: E402
from pydantic import PrivateAttr  # noqa: E402

from ragsift.eval.datasets import Dataset  # noqa: E402
from ragsift.eval.metrics import evaluate  # noqa: E402
from ragsift.models.embedders import Embedder, load_embedder  # noqa: E402

EMBEDDER = "minilm"
K = 10
METRICS = ["ndcg@10", "recall@10", "mrr@10"]
CHUNK_SIZE = 400  # child chunk size in characters for langchain-parent
# ParentDocumentRetriever returns the parents of the top child chunks, so it needs more than
# K children to fill K distinct parents (its default, 4 children, caps recall@10 at 4 docs).
PARENT_CHILD_K = 40
ID_KEY = "beir_id"  # metadata key holding the BEIR _id on every Document / node
SCALE_QUERIES = 50
SCALE_CLUSTERS = 256
SCALE_NOISE = 0.75  # norm of the gaussian noise added to a unit cluster centre
SEED = 13

SYSTEMS = ["ragsift-hybrid", "ragsift-weighted", "langchain-ensemble", "langchain-parent", "llamaindex-fusion"]
RAGSIFT_CONFIGS = {
    "ragsift-hybrid": {"channels": ["dense", "bm25"], "fusion": "rrf", "rrf_k": 60},
    "ragsift-weighted": {"channels": ["dense", "bm25"], "fusion": "weighted",
                         "weights": {"dense": 0.5, "bm25": 0.5}, "normalization": "minmax"},
}
PACKAGES = {
    "ragsift-hybrid": ["ragsift", "lancedb"],
    "ragsift-weighted": ["ragsift", "lancedb"],
    "langchain-ensemble": ["langchain", "langchain-classic", "langchain-community", "langchain-core",
                           "rank-bm25", "faiss-cpu"],
    "langchain-parent": ["langchain", "langchain-classic", "langchain-community", "langchain-core",
                         "langchain-text-splitters", "faiss-cpu"],
    "llamaindex-fusion": ["llama-index-core", "llama-index-retrievers-bm25", "bm25s", "PyStemmer"],
}


# --------------------------------------------------------------------------- adapters

class RagsiftLCEmbeddings(Embeddings):
    """LangChain ``Embeddings`` backed by a ragsift embedder (so the anchors use our model)."""

    def __init__(self, embedder: Embedder) -> None:
        self._emb = embedder

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._emb.embed_passages(texts).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self._emb.embed_queries([text])[0].tolist()


class RagsiftLIEmbedding(BaseEmbedding):
    """LlamaIndex ``BaseEmbedding`` backed by a ragsift embedder."""

    _emb: Any = PrivateAttr()

    def __init__(self, embedder: Embedder, **kwargs: Any) -> None:
        super().__init__(model_name=f"ragsift:{embedder.name}", **kwargs)
        self._emb = embedder

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._emb.embed_queries([query])[0].tolist()

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._emb.embed_passages([text])[0].tolist()

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._emb.embed_passages(texts).tolist()


# --------------------------------------------------------------------------- data

@dataclass
class Corpus:
    ids: list[str]
    texts: list[str]  # title + " " + text, as ragsift indexes it


@dataclass
class Vectors:
    array: np.ndarray  # (n, dim) float32, L2-normalised
    seconds: float  # time it took to compute them (at first computation when cached)
    cached: bool


def read_corpus(path: Path) -> Iterable[tuple[str, str]]:
    """Yield (BEIR _id, title + " " + text) for each row of a corpus.jsonl."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                row = json.loads(line)
                title, text = row.get("title") or "", row.get("text") or ""
                yield str(row["_id"]), f"{title} {text}".strip()


def select_queries(ds: Dataset, max_queries: int | None) -> list[str]:
    """Judged query ids in file order (as ragsift's own eval runner picks them)."""
    return [q for q in ds.qrels if q in ds.queries][:max_queries]


def load_corpus(ds: Dataset, qids: Sequence[str], max_docs: int | None) -> Corpus:
    """The whole corpus, or every doc judged relevant for ``qids`` plus the first ``max_docs`` others."""
    keep = {d for q in qids for d, r in ds.qrels[q].items() if r > 0}
    ids: list[str] = []
    texts: list[str] = []
    others = 0
    for did, text in read_corpus(ds.corpus):
        if max_docs is not None and did not in keep:
            if others >= max_docs:
                continue
            others += 1
        ids.append(did)
        texts.append(text)
    return Corpus(ids, texts)


def text_hash(texts: Sequence[str]) -> str:
    h = hashlib.sha1()
    for t in texts:
        h.update(t.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()[:16]


def cached_embeddings(texts: Sequence[str], emb: Embedder, cache_dir: Path, tag: str) -> Vectors:
    """Passage vectors for ``texts``, from ``cache_dir`` when the same texts were embedded before."""
    stem = cache_dir / f"anchors-{tag}-{emb.name}-{text_hash(texts)}"
    npy, meta = stem.with_suffix(".npy"), stem.with_suffix(".json")
    if npy.exists() and meta.exists():
        arr = np.load(npy)
        if arr.shape[0] == len(texts):
            return Vectors(arr, json.loads(meta.read_text())["seconds"], True)
    print(f"embedding {len(texts)} {tag} passages with {emb.name} ...", file=sys.stderr, flush=True)
    t = time.perf_counter()
    arr = emb.embed_passages(list(texts)).astype(np.float32)
    seconds = time.perf_counter() - t
    cache_dir.mkdir(parents=True, exist_ok=True)
    np.save(npy, arr)
    meta.write_text(json.dumps({"n": len(texts), "dim": int(arr.shape[1]), "seconds": seconds}))
    return Vectors(arr, seconds, False)


# --------------------------------------------------------------------------- synthetic corpus

def corpus_vocabulary(path: Path) -> tuple[list[str], np.ndarray]:
    """Words of the real corpus and their unigram probabilities."""
    counts: Counter[str] = Counter()
    for _, text in read_corpus(path):
        counts.update(re.findall(r"\w[\w\-]*", text))
    words = list(counts)
    freq = np.array([counts[w] for w in words], dtype=np.float64)
    return words, freq / freq.sum()


def synthetic_corpus(n: int, vocab: list[str], probs: np.ndarray, seed: int = SEED) -> Corpus:
    """``n`` documents of 40-80 words drawn from the real unigram distribution."""
    rng = np.random.default_rng(seed)
    texts = []
    for length in rng.integers(40, 81, size=n):
        texts.append(" ".join(vocab[i] for i in rng.choice(len(vocab), size=length, p=probs)))
    return Corpus([f"syn{i}" for i in range(n)], texts)


class ClusteredVectors:
    """Random unit vectors around ``SCALE_CLUSTERS`` gaussian centres (fixed seed)."""

    def __init__(self, n_docs: int, dim: int, seed: int = SEED) -> None:
        self._rng = np.random.default_rng(seed + 1)
        self.centres = _unit(self._rng.standard_normal((SCALE_CLUSTERS, dim)))
        self.doc_cluster = self._rng.integers(0, SCALE_CLUSTERS, size=n_docs)

    def around(self, clusters: np.ndarray) -> np.ndarray:
        noise = self._rng.standard_normal((len(clusters), self.centres.shape[1]))
        noise *= SCALE_NOISE / np.sqrt(self.centres.shape[1])
        return _unit(self.centres[clusters] + noise).astype(np.float32)

    def docs(self) -> Vectors:
        """The documents' vectors, drawn once: every system gets the very same ones."""
        if not hasattr(self, "_docs"):
            self._docs = Vectors(self.around(self.doc_cluster), 0.0, False)
        return self._docs

    def children(self, parent_index: Sequence[int]) -> Vectors:
        """Child vectors in the same cluster as their parent document."""
        return Vectors(self.around(self.doc_cluster[np.asarray(parent_index, dtype=np.int64)]), 0.0, False)


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v, axis=1, keepdims=True)


# --------------------------------------------------------------------------- systems

@dataclass
class Built:
    retrieve: Callable[[str], list[str]]  # query -> ranked distinct BEIR ids
    build_s: float  # index build time, excluding embedding
    embed_s: float
    embed_cached: bool


def _distinct(ids: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(ids))


def _lc_documents(corpus: Corpus) -> list[Document]:
    return [Document(page_content=t, metadata={ID_KEY: i}) for i, t in zip(corpus.ids, corpus.texts)]


def build_langchain_ensemble(corpus: Corpus, vecs: Vectors, lc_emb: Embeddings) -> Built:
    """BM25Retriever + FAISS retriever fused by EnsembleRetriever, 0.5/0.5, k=10 each."""
    t = time.perf_counter()
    docs = _lc_documents(corpus)
    bm25 = LCBM25Retriever.from_documents(docs, k=K)  # default preprocess_func: str.split
    store = FAISS.from_embeddings(list(zip(corpus.texts, vecs.array.tolist())), lc_emb,
                                  metadatas=[d.metadata for d in docs])
    ensemble = EnsembleRetriever(retrievers=[bm25, store.as_retriever(search_kwargs={"k": K})],
                                 weights=[0.5, 0.5])
    build_s = time.perf_counter() - t

    def retrieve(query: str) -> list[str]:
        return _distinct(d.metadata[ID_KEY] for d in ensemble.invoke(query))

    return Built(retrieve, build_s, vecs.seconds, vecs.cached)


def split_children(corpus: Corpus, splitter: RecursiveCharacterTextSplitter,
                   id_key: str) -> tuple[list[Document], list[int], list[tuple[str, Document]]]:
    """Children, their parent index and the (id, parent) pairs, as ParentDocumentRetriever.add_documents
    (with ``ids`` = BEIR ids) splits them; done here so the children can use cached vectors."""
    children: list[Document] = []
    parent_index: list[int] = []
    parents: list[tuple[str, Document]] = []
    for n, doc in enumerate(_lc_documents(corpus)):
        for child in splitter.split_documents([doc]):
            child.metadata[id_key] = doc.metadata[ID_KEY]
            children.append(child)
            parent_index.append(n)
        parents.append((doc.metadata[ID_KEY], doc))
    return children, parent_index, parents


def build_langchain_parent(corpus: Corpus, child_vectors: Callable[[list[str], list[int]], Vectors],
                           lc_emb: Embeddings) -> Built:
    """ParentDocumentRetriever: children (400 chars) in FAISS, whole documents in an InMemoryStore."""
    splitter = RecursiveCharacterTextSplitter(chunk_size=CHUNK_SIZE)
    id_key = "doc_id"  # ParentDocumentRetriever's default id_key
    t = time.perf_counter()
    children, parent_index, parents = split_children(corpus, splitter, id_key)
    split_s = time.perf_counter() - t
    vecs = child_vectors([c.page_content for c in children], parent_index)  # not part of build_s
    t = time.perf_counter()
    store = FAISS.from_embeddings(list(zip((c.page_content for c in children), vecs.array.tolist())),
                                  lc_emb, metadatas=[c.metadata for c in children])
    docstore = InMemoryStore()
    docstore.mset(parents)
    retriever = ParentDocumentRetriever(vectorstore=store, docstore=docstore, child_splitter=splitter,
                                        id_key=id_key, search_kwargs={"k": PARENT_CHILD_K})
    build_s = split_s + time.perf_counter() - t
    print(f"langchain-parent: {len(children)} child chunks", file=sys.stderr, flush=True)

    def retrieve(query: str) -> list[str]:
        return _distinct(d.metadata[ID_KEY] for d in retriever.invoke(query))[:K]

    return Built(retrieve, build_s, vecs.seconds, vecs.cached)


def build_llamaindex_fusion(corpus: Corpus, vecs: Vectors, li_emb: BaseEmbedding) -> Built:
    """QueryFusionRetriever (reciprocal rerank, one query) over vector + bm25s retrievers."""
    t = time.perf_counter()
    nodes = [TextNode(text=text, metadata={ID_KEY: did}, embedding=vec,
                      # keep the id out of what BM25 indexes (it reads MetadataMode.EMBED content)
                      excluded_embed_metadata_keys=[ID_KEY], excluded_llm_metadata_keys=[ID_KEY])
             for did, text, vec in zip(corpus.ids, corpus.texts, vecs.array.tolist())]
    # Nodes carry their embedding, so the index stores them without calling the embed model.
    index = VectorStoreIndex(nodes, embed_model=li_emb)
    bm25 = LIBM25Retriever.from_defaults(nodes=nodes, similarity_top_k=K)
    # num_queries=1: no LLM query generation. The constructor still reads Settings.llm, which
    # main() sets to None (LlamaIndex then uses MockLLM); it is never called.
    fusion = QueryFusionRetriever([index.as_retriever(similarity_top_k=K), bm25], mode="reciprocal_rerank",
                                  num_queries=1, similarity_top_k=K, use_async=False)
    build_s = time.perf_counter() - t

    def retrieve(query: str) -> list[str]:
        return _distinct(n.node.metadata[ID_KEY] for n in fusion.retrieve(query))

    return Built(retrieve, build_s, vecs.seconds, vecs.cached)


def build_ragsift(name: str, corpus: Corpus, cache_dir: Path, synthetic: ClusteredVectors | None,
                  full_corpus: Path | None = None) -> Built:
    """A ragsift knowledge base over the same documents (children embedded by ragsift itself,
    with the same model), kept in the cache dir and reused: re-ingesting unchanged rows is a no-op.
    The whole dataset is ingested from its own corpus.jsonl, as ``ragsift eval`` does (the same
    knowledge base as ``<work>/eval/<dataset>-minilm`` if copied there). In --scale mode the
    synthetic vectors go straight through the store's write path."""
    from ragsift.kb import KnowledgeBase

    if full_corpus is not None:
        tag = f"ragsift-kb-{full_corpus.parent.name}"
    else:
        tag = f"ragsift-kb-{'scale' if synthetic else 'docs'}-{len(corpus.ids)}-{text_hash(corpus.texts)}"
    kb = KnowledgeBase.open(cache_dir / tag, embedder=EMBEDDER)
    t = time.perf_counter()
    embed_s = 0.0
    if synthetic is None:
        rows = full_corpus
        if rows is None:
            rows = cache_dir / f"{tag}.jsonl"
            with open(rows, "w", encoding="utf-8") as f:
                for did, text in zip(corpus.ids, corpus.texts):
                    f.write(json.dumps({"_id": did, "text": text}, ensure_ascii=False) + "\n")
        report = kb.ingest(rows)
        embed_s = report.embed_seconds
    elif kb.stats()["documents"] == 0:
        _ragsift_synthetic(kb, corpus, synthetic.docs().array)
    build_s = time.perf_counter() - t - embed_s
    overrides = RAGSIFT_CONFIGS[name]

    def retrieve(query: str) -> list[str]:
        return [d for d, _ in kb.rank_documents(query, k=K, **overrides)]

    return Built(retrieve, build_s, embed_s, embed_s == 0.0)


def _ragsift_synthetic(kb, corpus: Corpus, vectors: np.ndarray) -> None:
    from ragsift.ingest.splitter import SplitSettings, split_document
    from ragsift.store.base import IndexedChild
    from ragsift.types import Document as RSDocument

    txn = kb.store.begin()
    for did, text, vec in zip(corpus.ids, corpus.texts, vectors):
        doc = RSDocument(did, "synthetic.jsonl", "", text, did, "jsonl", {})
        parents, children = split_document(doc, SplitSettings())
        txn.put_document(doc, parents, [IndexedChild(c, kb.analyzer.analyze(c.text), vec) for c in children])
    txn.commit()


# --------------------------------------------------------------------------- running

def run_queries(built: Built, queries: dict[str, str]) -> tuple[dict[str, list[str]], list[float]]:
    """Ranked ids and latency (ms, query embedding included) per query, after one untimed warm-up."""
    built.retrieve(next(iter(queries.values())))  # warm-up: lazy imports, first-call allocations
    run: dict[str, list[str]] = {}
    latencies: list[float] = []
    for qid, text in queries.items():
        t = time.perf_counter()
        run[qid] = built.retrieve(text)
        latencies.append((time.perf_counter() - t) * 1000)
    return run, latencies


def versions(system: str) -> dict[str, str]:
    return {p: importlib.metadata.version(p) for p in PACKAGES[system]}


def build_system(name: str, corpus: Corpus, doc_vectors: Callable[[], Vectors],
                 child_vectors: Callable[[list[str], list[int]], Vectors],
                 lc_emb: Embeddings, li_emb: BaseEmbedding, cache_dir: Path,
                 synthetic: ClusteredVectors | None, full_corpus: Path | None) -> Built:
    print(f"building {name} over {len(corpus.ids)} documents ...", file=sys.stderr, flush=True)
    if name in RAGSIFT_CONFIGS:
        return build_ragsift(name, corpus, cache_dir, synthetic, full_corpus)
    if name == "langchain-ensemble":
        return build_langchain_ensemble(corpus, doc_vectors(), lc_emb)
    if name == "langchain-parent":
        return build_langchain_parent(corpus, child_vectors, lc_emb)
    return build_llamaindex_fusion(corpus, doc_vectors(), li_emb)


def latency_summary(latencies: Sequence[float]) -> dict[str, float]:
    return {"p50_ms": float(np.percentile(latencies, 50)), "p95_ms": float(np.percentile(latencies, 95))}


def markdown_table(systems: dict[str, dict[str, Any]], scale: int | None) -> str:
    if scale:
        lines = ["| system | docs | p50 ms | p95 ms | build s |", "|---|---|---|---|---|"]
        for name, r in systems.items():
            lines.append(f"| {name} | {scale} | {r['p50_ms']:.1f} | {r['p95_ms']:.1f} | {r['build_s']:.2f} |")
        return "\n".join(lines)
    lines = [f"| system | {' | '.join(METRICS)} | p50 ms | p95 ms | build s | embed s |",
             "|" + "---|" * (len(METRICS) + 5)]
    for name, r in systems.items():
        cached = " (cached)" if r["embed_cached"] else ""
        lines.append(f"| {name} | " + " | ".join(f"{r['metrics'][m]:.4f}" for m in METRICS)
                     + f" | {r['p50_ms']:.1f} | {r['p95_ms']:.1f} | {r['build_s']:.2f} | {r['embed_s']:.1f}{cached} |")
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", required=True, help="BEIR-format folder (corpus.jsonl, queries.jsonl, qrels/)")
    p.add_argument("--out", required=True, help="JSON results file; vector caches go next to it")
    p.add_argument("--cache-dir", help="where vectors and ragsift knowledge bases are cached "
                                       "(default: next to --out)")
    p.add_argument("--split", default="test")
    p.add_argument("--max-docs", type=int, help="keep the relevant docs of the selected queries + N others")
    p.add_argument("--max-queries", type=int, help="first N judged queries")
    p.add_argument("--systems", default=",".join(SYSTEMS), help=f"comma list of {', '.join(SYSTEMS)}")
    p.add_argument("--scale", type=int, help="latency only, over N synthetic documents")
    args = p.parse_args(argv)
    args.systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = [s for s in args.systems if s not in SYSTEMS]
    if unknown:
        p.error(f"unknown system(s) {', '.join(unknown)}; valid: {', '.join(SYSTEMS)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    out = Path(args.out)
    cache_dir = Path(args.cache_dir) if args.cache_dir else out.resolve().parent
    ds = load_dataset(args.dataset, args.split)
    emb = load_embedder(EMBEDDER)
    lc_emb, li_emb = RagsiftLCEmbeddings(emb), RagsiftLIEmbedding(emb)
    Settings.llm = None  # LlamaIndex: explicit "no LLM" (MockLLM) so nothing reaches for OpenAI
    Settings.embed_model = li_emb

    if args.scale:
        qids = select_queries(ds, args.max_queries or SCALE_QUERIES)
        corpus = synthetic_corpus(args.scale, *corpus_vocabulary(ds.corpus))
        synth = ClusteredVectors(args.scale, emb.dim)
        doc_vectors: Callable[[], Vectors] = synth.docs

        def child_vectors(_texts: list[str], parents: list[int]) -> Vectors:
            return synth.children(parents)
    else:
        synth = None
        qids = select_queries(ds, args.max_queries)
        corpus = load_corpus(ds, qids, args.max_docs)
        doc_cache: list[Vectors] = []

        def doc_vectors() -> Vectors:  # embedded once, shared by the systems that need it
            if not doc_cache:
                doc_cache.append(cached_embeddings(corpus.texts, emb, cache_dir, f"{ds.name}-docs"))
            return doc_cache[0]

        def child_vectors(texts: list[str], _parents: list[int]) -> Vectors:
            return cached_embeddings(texts, emb, cache_dir, f"{ds.name}-children-cs{CHUNK_SIZE}")

    queries = {q: ds.queries[q] for q in qids}
    qrels = {q: ds.qrels[q] for q in qids}
    results: dict[str, dict[str, Any]] = {}
    for name in args.systems:
        built = build_system(name, corpus, doc_vectors, child_vectors, lc_emb, li_emb, cache_dir,
                             synth if args.scale else None,
                             ds.corpus if not args.scale and args.max_docs is None else None)
        run, lat = run_queries(built, queries)
        r: dict[str, Any] = {**latency_summary(lat), "build_s": built.build_s, "versions": versions(name)}
        if args.scale:
            r["vectors"] = "synthetic"
        else:
            r.update(metrics=evaluate(run, qrels, METRICS), embed_s=built.embed_s,
                     embed_cached=built.embed_cached, latencies_ms=lat, run=run)
        results[name] = r

    report = {"date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
              "dataset": str(ds.path), "embedder": EMBEDDER, "mode": "scale" if args.scale else "quality",
              "n_docs": len(corpus.ids), "n_queries": len(queries), "k": K,
              "settings": {"chunk_size": CHUNK_SIZE, "parent_child_k": PARENT_CHILD_K,
                           "max_docs": args.max_docs, "max_queries": args.max_queries, "scale": args.scale},
              "systems": results}
    write_result(out, report)
    print(f"{ds.name}: {len(corpus.ids)} docs, {len(queries)} queries -> {out}")
    print(markdown_table(results, args.scale))
    return 0


if __name__ == "__main__":
    sys.exit(main())
