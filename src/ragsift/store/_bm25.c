/* BM25's search of one segment, compiled: the MaxScore loop of ``BM25Index.search`` step for
 * step (each term's postings read in one pass where NumPy makes five to seven: gather the rows'
 * normalisations, weigh, gather the scores, find the rows not seen yet, scatter; the cut and the
 * completion over the candidate rows without a Python call per term). Optional: ``memindex``
 * takes the NumPy path when this module is not built, and both give the same rows and the same
 * float32 scores (the same operations in the same order: x = (f * wk) / (norm + f), then
 * score += x, term after term; built with -ffp-contract=off so that no fused multiply-add changes
 * a rounding; bounds compared in double as NumPy compares them).
 *
 * Arrays come through the buffer protocol (no NumPy headers at build time), contiguous, of the
 * dtypes named at ``search``. Every term, row and language number is checked before it is used:
 * an index that does not fit its arrays is a ValueError, never a read out of bounds. The GIL is
 * released while a search runs, so queries in several threads score at once. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH 16
#else
#define PREFETCH 0
#define __builtin_prefetch(addr, rw) ((void)(addr))
#endif

/* ---- the whole MaxScore search of one segment (BM25Index.search's loop, the same steps) ---- */

typedef struct {
    const int32_t *post_rows;
    const uint16_t *post_tf;
    const int64_t *indptr;
    const int64_t *terms;   /* the query's terms (rows of indptr), in the order they are added */
    const float *wks;       /* per term: nwk weights times (k1 + 1) */
    const int8_t *groups;   /* per row: its language group, or NULL (one weight) */
    const float *norm;
    float *acc;
    const uint8_t *allowed; /* NULL: every row */
    uint8_t *member;
    const double *rest;     /* rest[j]: the bound of terms j.. (nterms + 1 values) */
    const double *read;     /* read[j]: the most a row can score from terms ..j */
    int32_t *touched;       /* every row given a score (zeroed again at the end) */
    int32_t *ok;            /* the allowed rows seen */
    float *tmp;             /* scores, for the k-th best; then the hits (room for a Hit each) */
    Py_ssize_t nterms, nwk, nrows, npost, nindptr;
    Py_ssize_t ntouched, nok;
} Search;

static inline int weight_of(const Search *s, Py_ssize_t j, Py_ssize_t p, int32_t r, float *x) {
    if (r < 0 || r >= s->nrows) return -1;
    float w;
    if (s->groups) {
        int8_t g = s->groups[r];
        if (g < 0 || g >= s->nwk) return -1;
        w = s->wks[j * s->nwk + g];
    } else {
        w = s->wks[j * s->nwk];
    }
    float f = (float)s->post_tf[p];
    float y = f * w;
    *x = y / (s->norm[r] + f);
    return 0;
}

static int term_range(const Search *s, Py_ssize_t j, Py_ssize_t *a, Py_ssize_t *b) {
    int64_t t = s->terms[j];
    if (t < 0 || t + 1 >= s->nindptr) return -1;
    *a = (Py_ssize_t)s->indptr[t];
    *b = (Py_ssize_t)s->indptr[t + 1];
    if (*a < 0 || *b < *a || *b > s->npost) return -1;
    return 0;
}

/* the k-th largest of v[0..n) (n >= k >= 1), by quickselect; v is reordered */
static float kth_largest(float *v, Py_ssize_t n, Py_ssize_t k) {
    Py_ssize_t lo = 0, hi = n - 1, want = k - 1;
    while (lo < hi) {
        float pivot = v[lo + (hi - lo) / 2];
        Py_ssize_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] > pivot) i++;
            while (v[j] < pivot) j--;
            if (i <= j) {
                float t = v[i]; v[i] = v[j]; v[j] = t;
                i++; j--;
            }
        }
        if (want <= j) hi = j;
        else if (want >= i) lo = i;
        else return v[want];
    }
    return v[want];
}

/* the rows of ok that can still reach theta with the bound of terms j.. */
static void keep_reaching(Search *s, Py_ssize_t j, double theta) {
    Py_ssize_t m = 0;
    double bound = s->rest[j] * (1 + 1e-5);
    for (Py_ssize_t q = 0; q < s->nok; q++) {
        int32_t r = s->ok[q];
        s->ok[m] = r;
        m += (double)s->acc[r] + bound >= theta;
    }
    s->nok = m;
}

/* terms first.. added to the rows of ok only (BM25Index._complete; the rows need no order here) */
static int complete(Search *s, Py_ssize_t first, double theta) {
    for (Py_ssize_t j = first; j < s->nterms; j++) {
        keep_reaching(s, j, theta);
        Py_ssize_t a, b;
        if (term_range(s, j, &a, &b)) return -1;
        Py_ssize_t len = b - a;
        float x;
        if ((double)s->nok * log2((double)len + 2) < (double)len) {  /* few rows: binary search */
            for (Py_ssize_t q = 0; q < s->nok; q++) {
                int32_t r = s->ok[q];
                Py_ssize_t l = a, h = b;
                while (l < h) {
                    Py_ssize_t mid = l + (h - l) / 2;
                    if (s->post_rows[mid] < r) l = mid + 1; else h = mid;
                }
                if (l < b && s->post_rows[l] == r) {
                    if (weight_of(s, j, l, r, &x)) return -1;
                    s->acc[r] += x;
                }
            }
            continue;
        }
        for (Py_ssize_t q = 0; q < s->nok; q++) s->member[s->ok[q]] = 1;  /* many: read the postings whole */
        int bad = 0;
        for (Py_ssize_t p = a; p < b; p++) {
            int32_t r = s->post_rows[p];
            if (r < 0 || r >= s->nrows) { bad = 1; break; }
            if (!s->member[r]) continue;
            if (weight_of(s, j, p, r, &x)) { bad = 1; break; }
            s->acc[r] += x;
        }
        for (Py_ssize_t q = 0; q < s->nok; q++) s->member[s->ok[q]] = 0;
        if (bad) return -1;
    }
    return 0;
}

static int run_search(Search *s, Py_ssize_t k, double floor) {
    float x;
    for (Py_ssize_t j = 0; j < s->nterms; j++) {
        Py_ssize_t a, b;
        if (term_range(s, j, &a, &b)) return -1;
        for (Py_ssize_t p = a; p < b; p++) {
            int32_t r = s->post_rows[p];
            if (p + PREFETCH < b) {  /* the rows' scores and lengths are random reads: ask for them early */
                int32_t ahead = s->post_rows[p + PREFETCH];
                if (ahead >= 0 && ahead < s->nrows) {
                    __builtin_prefetch(&s->acc[ahead], 1);
                    __builtin_prefetch(&s->norm[ahead], 0);
                }
            }
            if (weight_of(s, j, p, r, &x)) return -1;
            float before = s->acc[r];
            /* every weight is > 0: a row scored 0 is one not seen yet (kept without a branch: which
             * rows are new is random) */
            int fresh = before == 0.0f;
            s->touched[s->ntouched] = r;
            s->ntouched += fresh;
            s->ok[s->nok] = r;
            s->nok += fresh & (!s->allowed || s->allowed[r]);
            s->acc[r] = before + x;
        }
        if (j + 1 == s->nterms) break;
        double unread = s->rest[j + 1];
        if (s->read[j] <= unread && floor <= unread) continue;  /* no row seen can yet beat the unread terms */
        Py_ssize_t nh = 0;  /* the cut needs k rows above the unread terms' bound */
        for (Py_ssize_t q = 0; q < s->nok; q++) {
            float v = s->acc[s->ok[q]];
            s->tmp[nh] = v;
            nh += (double)v > unread;
        }
        double theta = nh >= k ? (double)kth_largest(s->tmp, nh, k) : -1.0;
        if (floor > theta) theta = floor;
        if (theta > unread) return complete(s, j + 1, theta);
    }
    return 0;
}

typedef struct { int32_t row; float score; } Hit;

static int cmp_hits(const void *a, const void *b) {
    const Hit *x = (const Hit *)a, *y = (const Hit *)b;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

/* search(post_rows, post_tf, indptr, terms, wks, groups, norm, acc, allowed, member, rest, read,
 *        out_rows, out_scores, k, floor) -> m
 * The k best allowed rows of the segment (exact, MaxScore), best first, ties in row order,
 * written to out_rows (int64) and out_scores (float32): m of them. acc (float32) and member
 * (bool), one per row, are zero before and after. allowed (bool, one per row) may be empty:
 * every row. groups (int8, one per row) may be empty: one weight per term in wks (float32,
 * nterms x nwk). rest and read: float64, as BM25Index.search computes them. */
static PyObject *search(PyObject *self, PyObject *args) {
    (void)self;
    enum { NBUF = 14 };
    Py_buffer bufs[NBUF];
    Py_ssize_t k;
    double floor;
    memset(bufs, 0, sizeof bufs);
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*w*y*w*y*y*w*w*nd", &bufs[0], &bufs[1], &bufs[2], &bufs[3],
                          &bufs[4], &bufs[5], &bufs[6], &bufs[7], &bufs[8], &bufs[9], &bufs[10], &bufs[11],
                          &bufs[12], &bufs[13], &k, &floor))
        return NULL;
    Search s;
    memset(&s, 0, sizeof s);
    s.post_rows = bufs[0].buf; s.post_tf = bufs[1].buf; s.indptr = bufs[2].buf; s.terms = bufs[3].buf;
    s.wks = bufs[4].buf; s.groups = bufs[5].len ? bufs[5].buf : NULL; s.norm = bufs[6].buf;
    s.acc = bufs[7].buf; s.allowed = bufs[8].len ? bufs[8].buf : NULL; s.member = bufs[9].buf;
    s.rest = bufs[10].buf; s.read = bufs[11].buf;
    s.npost = bufs[0].len / 4;
    s.nindptr = bufs[2].len / 8;
    s.nterms = bufs[3].len / 8;
    s.nrows = bufs[7].len / 4;
    s.nwk = s.nterms ? bufs[4].len / 4 / s.nterms : 1;
    const char *err = NULL;
    PyObject *kind = PyExc_ValueError;
    if (bufs[0].len % 4 || bufs[1].len / 2 != s.npost || bufs[6].len / 4 != s.nrows ||
        (s.groups && bufs[5].len != s.nrows) || (s.allowed && bufs[8].len != s.nrows) || bufs[9].len != s.nrows ||
        bufs[10].len / 8 != s.nterms + 1 || bufs[11].len / 8 != s.nterms || s.nwk < 1 ||
        bufs[4].len != s.nterms * s.nwk * 4 || (!s.groups && s.nwk != 1) || k < 0 ||
        bufs[12].len / 8 < k || bufs[13].len / 4 < k)
        err = "bm25 kernel: buffer lengths do not match";
    /* working space: at most one entry per row the query's postings hold */
    Py_ssize_t cap = 0;
    for (Py_ssize_t j = 0; !err && j < s.nterms; j++) {
        Py_ssize_t a, b;
        if (term_range(&s, j, &a, &b)) err = "bm25 kernel: a term out of range";
        else cap += b - a;
    }
    if (cap > s.nrows) cap = s.nrows;
    if (!err) {
        /* one more than can be kept: the loops without a branch write one slot past the last kept */
        s.touched = malloc((size_t)(cap + 1) * sizeof(int32_t));
        s.ok = malloc((size_t)(cap + 1) * sizeof(int32_t));
        s.tmp = malloc((size_t)(cap + 1) * sizeof(Hit));  /* >= sizeof(float) */  /* the scores, then the hits */
        if (!s.touched || !s.ok || !s.tmp) { err = "bm25 kernel: out of memory"; kind = PyExc_MemoryError; }
    }
    Py_ssize_t m = 0;
    if (!err) {
        int bad;
        Py_BEGIN_ALLOW_THREADS
        bad = k > 0 ? run_search(&s, k, floor) : 0;
        if (!bad && k > 0) {
            /* the rows that can be among the k best (ties at the k-th included), sorted */
            Py_ssize_t n = s.nok;
            if (n > k) {
                for (Py_ssize_t q = 0; q < n; q++) s.tmp[q] = s.acc[s.ok[q]];
                float kth = kth_largest(s.tmp, n, k);
                Py_ssize_t c = 0;
                for (Py_ssize_t q = 0; q < n; q++) if (s.acc[s.ok[q]] >= kth) s.ok[c++] = s.ok[q];
                n = c;
            }
            Hit *h = (Hit *)s.tmp;
            for (Py_ssize_t q = 0; q < n; q++) { h[q].row = s.ok[q]; h[q].score = s.acc[s.ok[q]]; }
            qsort(h, (size_t)n, sizeof(Hit), cmp_hits);
            m = n < k ? n : k;
            int64_t *out_rows = bufs[12].buf;
            float *out_scores = bufs[13].buf;
            for (Py_ssize_t q = 0; q < m; q++) { out_rows[q] = h[q].row; out_scores[q] = h[q].score; }
        }
        for (Py_ssize_t q = 0; q < s.ntouched; q++) s.acc[s.touched[q]] = 0.0f;
        Py_END_ALLOW_THREADS
        if (bad) err = "bm25 kernel: a term, row or language out of range";
    }
    free(s.touched);
    free(s.ok);
    free(s.tmp);
    for (int i = 0; i < NBUF; i++) PyBuffer_Release(&bufs[i]);
    if (err) {
        PyErr_SetString(kind, err);
        return NULL;
    }
    return PyLong_FromSsize_t(m);
}

static PyMethodDef methods[] = {
    {"search", search, METH_VARARGS, "The k best rows of a segment for a query's terms (MaxScore, exact)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_bm25", "BM25's compiled inner loops.", -1, methods};

PyMODINIT_FUNC PyInit__bm25(void) { return PyModule_Create(&module); }
