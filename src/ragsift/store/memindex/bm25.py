"""``BM25Index``: an inverted index (postings per term as CSR arrays with each posting's term
frequency; weights are computed at query time from the statistics of every segment), so a query
touches only its own terms' postings; searched by compiled code (``_bm25.c``) when the module is
built, else by NumPy, to the same rows and float32 scores (``weigh``: the one formula of both)."""
from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ragsift.store.memindex.rows import LANGUAGE_GROUPS, NOTHING, Rows, SegmentHits
from ragsift.store.memindex.saved import saved_folder

try:  # BM25's search compiled (``_bm25.c``, built at install when a C compiler is there)
    import ragsift.store._bm25 as compiled_bm25
except ImportError:  # pragma: no cover - a build without a compiler: the NumPy path, same scores
    compiled_bm25 = None  # type: ignore[assignment]


BM25_K1 = 1.2
BM25_B = 0.75


class BM25Index:
    """BM25 postings of one segment (k1 1.2, b 0.75; idf ln(1 + (N - df + 0.5) / (df + 0.5))).

    Postings are CSR arrays per term: the row of each posting and its term frequency; each row's
    length is kept beside them. The statistics a score needs (N, the average length, a term's
    document frequency) are the caller's (``ragsift.store.segments.BM25Stats``: global over every
    segment's live rows), so each weight ``tf (k1 + 1) / (tf + k1 (1 - b + b len / avglen))`` is
    computed at query time from the row's normalisation ``norm`` and the term's frequency. A
    query adds its terms in the order it is given (the same for every segment): a row's score is
    the same float32 sum whichever segments it is split into.

    In a base of several languages the statistics are kept per language (``Rows.lang_groups``): a
    term's weight is then one idf per language (an array), a row takes its own language's, and
    ``norm`` holds each row's normalisation under its own language's average length.
    """

    BLOCK = 131_072  # rows tokenised at a time: the transient memory of a build stays bounded
    ARRAYS = ("post_rows", "post_tf", "indptr", "df", "max_tf", "min_dl", "dl")

    def __init__(self, rows: Rows, table: Callable[[], pa.Table], directory: Path | None = None) -> None:
        self.rows = rows
        self.n = rows.n
        self._local = threading.local()
        if directory is not None and (directory / "vocab.arrow").exists():
            self._load(directory)
            return
        self._build(pc.fill_null(table().column("terms"), ""))
        if directory is not None:
            self._save(directory)

    def _build(self, terms: pa.ChunkedArray) -> None:
        n = self.n
        vocab: dict[str, int] = {}
        blocks = []  # per block of rows: (term, row, tf) sorted by term, then row
        dl = np.zeros(n, np.float32)
        for start in range(0, n, self.BLOCK):
            part = terms.slice(start, self.BLOCK)
            m = len(part)
            tokens = pc.split_pattern(part, " ").combine_chunks()
            lengths = np.asarray(pc.list_value_length(tokens).fill_null(0).to_numpy(zero_copy_only=False), np.int64)
            flat = tokens.flatten()
            doc = np.repeat(np.arange(m, dtype=np.int64), lengths)
            keep = np.asarray(pc.not_equal(flat, "").fill_null(False).to_numpy(zero_copy_only=False), bool)
            if not keep.all():
                flat, doc = flat.filter(pa.array(keep)), doc[keep]
            enc = pc.dictionary_encode(flat)
            words = enc.dictionary.to_pylist()
            remap = np.fromiter((vocab.setdefault(w, len(vocab)) for w in words), np.int64, len(words))
            tid = remap[np.asarray(enc.indices.to_numpy(zero_copy_only=False), np.int64)]
            del flat, enc, tokens, words
            dl[start:start + m] = np.bincount(doc, minlength=m)
            key, tf = np.unique(tid * m + doc, return_counts=True)
            del tid, doc
            blocks.append(((key // m).astype(np.int32), (key % m + start).astype(np.int32),
                           np.minimum(tf, 65_535).astype(np.uint16)))
            del key, tf
        counts = np.zeros(len(vocab), np.int64)
        for t, _, _ in blocks:
            counts += np.bincount(t, minlength=len(vocab))
        self.indptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
        total = int(self.indptr[-1])
        self.post_rows = np.empty(total, np.int32)
        self.post_tf = np.empty(total, np.uint16)
        fill = self.indptr[:-1].copy()
        while blocks:  # blocks in row order: each term's postings stay sorted by row
            t, d, f = blocks.pop(0)
            uniq, first, cnt = np.unique(t, return_index=True, return_counts=True)
            pos = fill[t] + (np.arange(len(t)) - np.repeat(first, cnt))
            self.post_rows[pos] = d
            self.post_tf[pos] = f
            fill[uniq] += cnt
        self.dl = dl
        self.df = counts
        # each term's largest frequency and shortest row: the bound MaxScore prunes with
        if total:
            self.max_tf = np.maximum.reduceat(self.post_tf, self.indptr[:-1])
            self.min_dl = np.minimum.reduceat(dl[self.post_rows], self.indptr[:-1])
        else:
            self.max_tf, self.min_dl = np.zeros(len(vocab), np.uint16), np.zeros(len(vocab), np.float32)
        self.vocab = vocab

    def _save(self, directory: Path) -> None:
        with saved_folder(directory) as tmp:
            for name in self.ARRAYS:
                np.save(tmp / f"{name}.npy", getattr(self, name))
            words = pa.array(list(self.vocab), pa.large_string())
            schema = pa.schema([("w", words.type)])
            with pa.OSFile(str(tmp / "vocab.arrow"), "wb") as sink, pa.ipc.new_file(sink, schema) as w:
                w.write_table(pa.table({"w": words}))

    def _load(self, directory: Path) -> None:
        for name in self.ARRAYS:
            setattr(self, name, np.load(directory / f"{name}.npy", mmap_mode="r"))
        self.dl = np.asarray(self.dl)  # read whole by every generation's statistics
        words = pa.ipc.open_file(pa.memory_map(str(directory / "vocab.arrow"))).read_all().column("w").to_pylist()
        self.vocab = {w: i for i, w in enumerate(words)}

    def live_df(self, term: str, live: np.ndarray | None) -> int:
        """How many of the live rows (a mask; None: all) hold ``term``."""
        i = self.vocab.get(term)
        if i is None:
            return 0
        if live is None:
            return int(self.df[i])
        return int(live[self.post_rows[int(self.indptr[i]):int(self.indptr[i + 1])]].sum())

    def live_df_by_language(self, term: str, live: np.ndarray | None) -> np.ndarray:
        """How many of the live rows of each language (``Rows.lang_groups``' codes) hold ``term``."""
        i = self.vocab.get(term)
        if i is None:
            return np.zeros(LANGUAGE_GROUPS, np.int64)
        rows = np.asarray(self.post_rows[int(self.indptr[i]):int(self.indptr[i + 1])])
        if live is not None:
            rows = rows[live[rows]]
        return np.bincount(self.rows.lang_groups()[rows], minlength=LANGUAGE_GROUPS)

    def _row_weight(self, w: float | np.ndarray, rows: np.ndarray) -> float | np.ndarray:
        """A term's weight for these rows: the term's one weight, or each row's language's."""
        return w if isinstance(w, float) else np.asarray(w)[self.rows.lang_groups()[rows]]

    def _accumulate(self, acc: np.ndarray, i: int, w: float | np.ndarray, norm: np.ndarray) -> np.ndarray:
        """Add term ``i``'s weights (``w``: the term's) under these row normalisations to its
        postings' rows in ``acc``; the rows it held 0 for (not seen yet: every weight is > 0)."""
        a, b = int(self.indptr[i]), int(self.indptr[i + 1])
        found = np.asarray(self.post_rows[a:b])
        weights = weigh(self.post_tf[a:b], norm[found], self._row_weight(w, found))
        before = acc[found]
        new = found[before == 0]
        before += weights
        acc[found] = before  # rows are unique within a term
        return new

    def _search_compiled(self, local: list[tuple[int, float | np.ndarray]], k: int, rows: np.ndarray | None,
                         norm: np.ndarray, rest: np.ndarray, read: np.ndarray, floor: float) -> SegmentHits:
        """``search`` by the compiled module: the same steps, rows and float32 scores."""
        assert compiled_bm25 is not None
        scratch = self._scratch()
        terms = np.array([i for i, _ in local], np.int64)
        if all(isinstance(w, float) for _, w in local):
            wks = np.array([_times_k1(w) for _, w in local], np.float32)
            groups = _NO_GROUPS
        else:  # one weight per language for every term
            wks = np.stack([np.broadcast_to(_times_k1(w), (LANGUAGE_GROUPS,)) for _, w in local])
            groups = self.rows.lang_groups()
        allowed = _NO_ROWS
        if rows is not None:
            allowed = scratch.allowed
            allowed[rows] = True
        out_rows, out_scores = np.empty(k, np.int64), np.empty(k, np.float32)
        try:
            m = compiled_bm25.search(self.post_rows, self.post_tf, self.indptr, terms, wks, groups, norm, scratch.acc,
                                     allowed, scratch.member, rest, read, out_rows, out_scores, k, float(floor))
        finally:
            if rows is not None:
                allowed[rows] = False
        return self.rows.found(out_rows[:m], out_scores[:m])

    def search(self, items: Sequence[tuple[str, float | np.ndarray]], k: int, rows: np.ndarray | None,
               norm: np.ndarray, avgdl: float | np.ndarray, floor: float = -1.0) -> SegmentHits:
        """The k best rows (of ``rows`` when given), exactly, without reading every posting of
        common terms (MaxScore). ``items``: the query's terms and weights in the order to add them.
        ``floor``: a score k rows elsewhere (other segments) already reach; rows that cannot reach
        it may be left out. With statistics per language, a weight and ``avgdl`` are arrays (one
        value per language).

        Once the k-th best score of the rows seen so far (counting only the terms read) beats the
        most a row seen by none of them could score (the sum of the unread terms' bounds), no
        unseen row can enter the top k: the rows seen (less those that cannot reach the k-th best
        even with every unread term's bound) get the unread terms' weights, by binary search in
        those terms' postings or by reading a common term's postings whole, whichever costs less,
        term after term in the same order (the same float32 sum as reading every posting).
        """
        local = [(self.vocab[t], w) for t, w in items if t in self.vocab]
        if not local or k <= 0:
            return self.rows.found(NOTHING, NOTHING)
        bounds = np.array([self._bound(i, w, avgdl) for i, w in local])
        rest = np.concatenate((np.cumsum(bounds[::-1])[::-1], [0.0]))  # rest[j]: bound of terms j..
        read = np.cumsum(bounds) * (1 + 1e-5)  # read[j]: the most a row can score from terms ..j
        if compiled_bm25 is not None:
            return self._search_compiled(local, k, rows, norm, rest, read, floor)
        scratch = self._scratch()
        acc = scratch.acc  # zero outside the rows touched, which are zeroed again before returning
        touched: list[np.ndarray] = []
        allowed = None
        if rows is not None:
            allowed = scratch.allowed
            allowed[rows] = True
        try:
            parts: list[np.ndarray] = []  # the allowed rows seen, each once
            for j, (i, w) in enumerate(local):
                new = self._accumulate(acc, i, w, norm)
                touched.append(new)
                parts.append(new if allowed is None else new[allowed[new]])
                if j + 1 == len(local):
                    break
                if read[j] <= rest[j + 1] and floor <= rest[j + 1]:
                    continue  # no row seen can yet beat the unread terms' bound: no cut possible
                ok = np.concatenate(parts) if len(parts) > 1 else parts[0]
                parts = [ok]
                # the cut needs k rows above the unread terms' bound (or the floor above it): the
                # k-th best is looked for among those rows only
                high = acc[ok]
                high = high[high > rest[j + 1]]
                theta = float(np.partition(high, len(high) - k)[len(high) - k]) if len(high) >= k else -1.0
                theta = max(theta, floor)
                if theta > rest[j + 1]:
                    parts = [self._complete(acc, ok, local, j + 1, rest, theta, norm, scratch.member)]
                    break
            ok = np.concatenate(parts) if len(parts) > 1 else parts[0]
            scores = acc[ok]
            if len(ok) > k:  # the rows that can be among the k best (ties at the k-th included)
                keep = scores >= np.partition(scores, len(scores) - k)[len(scores) - k]
                ok, scores = ok[keep], scores[keep]
            order = np.lexsort((ok, -scores))[:k]  # best first, ties in row order
            return self.rows.found(ok[order].astype(np.int64), scores[order])
        finally:
            if sum(len(t) for t in touched) > self.n // 16:
                acc.fill(0)
            else:
                for t in touched:
                    acc[t] = 0
            if rows is not None:
                allowed[rows] = False  # type: ignore[index]

    def _complete(self, acc: np.ndarray, ok: np.ndarray, local: list[tuple[int, float | np.ndarray]], first: int,
                  rest: np.ndarray, theta: float, norm: np.ndarray, member: np.ndarray) -> np.ndarray:
        """Add terms ``first``.. to the rows ``ok`` in order, dropping before each term the rows that
        cannot reach ``theta`` with every unread term's bound; the rows left (sorted)."""
        for j2 in range(first, len(local)):
            # theta: k rows score at least it; the bounds carry a margin over float32 rounding
            ok = ok[acc[ok] + rest[j2] * (1 + 1e-5) >= theta]
            if j2 == first:
                ok = np.sort(ok)  # the binary searches below want them in row order
            i2, w2 = local[j2]
            a, b = int(self.indptr[i2]), int(self.indptr[i2 + 1])
            if len(ok) * np.log2(b - a + 2) < b - a:  # few rows: binary search in the postings
                self._add(acc, i2, w2, ok, norm)
                continue
            member[ok] = True  # many: read the postings whole, keep the rows seen
            try:
                found = np.asarray(self.post_rows[a:b])
                keep = np.flatnonzero(member[found])
                target = found[keep]
                acc[target] += weigh(self.post_tf[a + keep], norm[target], self._row_weight(w2, target))
            finally:
                member[ok] = False
        return ok

    def _scratch(self) -> _Scratch:
        """This thread's zeroed working arrays for this index (kept: a million rows' accumulator
        is 4 MB, zeroed again by each search where it wrote)."""
        found = getattr(self._local, "scratch", None)
        if found is None:
            found = self._local.scratch = _Scratch(self.n)
        return found

    def _bound(self, i: int, w: float | np.ndarray, avgdl: float | np.ndarray) -> float:
        """The most term ``i`` (of weight ``w``) can weigh in a row: its largest frequency in its
        shortest row (per language: the largest over the languages, each with its own weight and
        average length)."""
        tf = float(self.max_tf[i])
        if isinstance(w, float) and isinstance(avgdl, float):  # one set of statistics: plain floats
            return float(w) * tf * (BM25_K1 + 1) / (
                tf + BM25_K1 * (1 - BM25_B + BM25_B * float(self.min_dl[i]) / (float(avgdl) or 1.0))) * (1 + 1e-6)
        avg = np.asarray(avgdl, np.float64)
        avg = np.where(avg > 0, avg, 1.0)
        per = tf * (BM25_K1 + 1) / (tf + BM25_K1 * (1 - BM25_B + BM25_B * float(self.min_dl[i]) / avg))
        return float(np.max(np.asarray(w, np.float64) * per)) * (1 + 1e-6)

    def _add(self, acc: np.ndarray, i: int, w: float | np.ndarray, rows: np.ndarray, norm: np.ndarray) -> None:
        """Add term ``i``'s weight to these rows (sorted) where it occurs, by binary search in its postings."""
        a, b = int(self.indptr[i]), int(self.indptr[i + 1])
        postings = self.post_rows[a:b]
        pos = np.minimum(np.searchsorted(postings, rows), b - a - 1)
        hit = postings[pos] == rows
        at, target = a + pos[hit], rows[hit]
        acc[target] += weigh(self.post_tf[at], norm[target], self._row_weight(w, target))


class _Scratch:
    """A search's per-thread working arrays: the score of each row, and two row masks."""

    def __init__(self, n: int) -> None:
        self.acc = np.zeros(n, np.float32)
        self.allowed = np.zeros(n, bool)
        self.member = np.zeros(n, bool)


_NO_GROUPS = np.zeros(0, np.int8)  # the compiled search: one weight for every row
_NO_ROWS = np.zeros(0, bool)  # the compiled search: every row allowed


def weigh(tf: np.ndarray, norm: np.ndarray, w: float | np.ndarray) -> np.ndarray:
    """A term's BM25 weights ``w tf (k1 + 1) / (tf + norm)`` in float32 (``w``: the term's idf, or
    each posting's row's language's; a query term counts once, ``query_terms``), computed one way
    everywhere: the score of one row must not depend on which path read its postings. ``norm`` is
    a new array (a gather) and is overwritten."""
    f = np.asarray(tf).astype(np.float32)
    np.add(norm, f, out=norm)
    f *= _times_k1(w)
    f /= norm
    return f


def _times_k1(w: float | np.ndarray) -> np.float32 | np.ndarray:
    """A term's weight (or one per posting, or per language) times k1 + 1, rounded to float32 once:
    the factor both the NumPy path (``weigh``) and the compiled search multiply by."""
    if isinstance(w, float):
        return np.float32((BM25_K1 + 1) * w)
    return ((BM25_K1 + 1) * np.asarray(w, np.float64)).astype(np.float32)
