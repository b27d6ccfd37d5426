/* An exact dense pass over a filter's rows at a quarter of the memory: each row's int8 copy
 * (``AnnIndex``'s ``vectors.i8``, one byte per dimension where the float32 vectors take four)
 * times the query quantised to int16, summed in int32. ``memindex`` keeps the best of these
 * approximate scores and scores them again exactly from the float32 vectors; where this module is
 * not built, the exact pass reads the float32 vectors for every row, to the same hits.
 *
 * Arrays come through the buffer protocol (no NumPy headers at build time), contiguous, of the
 * dtypes named at ``scores``. Every row is checked against the matrix before it is read, and the
 * query's sum of magnitudes against int32's range: rows out of range or a query that could
 * overflow are a ValueError, never a read out of bounds or a wrapped sum. The GIL is released
 * while the rows are scored. Where GCC targets x86-64 on Linux the scoring loop is compiled twice,
 * for AVX2 and for the baseline, and the loader picks the one the processor runs. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define CLONES __attribute__((target_clones("avx2", "default")))
#else
#define CLONES
#endif

#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH_ROWS 8
#else
#define PREFETCH_ROWS 0
#define __builtin_prefetch(addr, rw, loc) ((void)(addr))
#endif

/* one row's approximate score: a loop the compiler turns into widening multiply-adds */
static inline int32_t dot(const int8_t *restrict x, const int16_t *restrict q, Py_ssize_t dim) {
    int32_t s = 0;
    for (Py_ssize_t d = 0; d < dim; d++) s += (int32_t)x[d] * (int32_t)q[d];
    return s;
}

/* the rows' scores in order; -1 where a row is out of range (nothing written past it) */
CLONES static int score_rows(const int8_t *matrix, Py_ssize_t nrows, Py_ssize_t dim, const int64_t *rows,
                             Py_ssize_t m, const int16_t *q, int32_t *out) {
    for (Py_ssize_t i = 0; i < m; i++) {
        int64_t r = rows[i];
        if (r < 0 || r >= nrows) return -1;
        if (i + PREFETCH_ROWS < m) {
            int64_t ahead = rows[i + PREFETCH_ROWS];
            if (ahead >= 0 && ahead < nrows) {
                const char *p = (const char *)(matrix + ahead * dim);
                for (Py_ssize_t b = 0; b < dim; b += 64) __builtin_prefetch(p + b, 0, 0);
            }
        }
        out[i] = dot(matrix + r * dim, q, dim);
    }
    return 0;
}

/* scores(matrix, rows, query, out) -> None
 * matrix: int8, nrows x dim, row-major; rows: int64 (any order); query: int16, dim values;
 * out: int32, one per row, written. */
static PyObject *scores(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer matrix, rows, query, out;
    if (!PyArg_ParseTuple(args, "y*y*y*w*", &matrix, &rows, &query, &out)) return NULL;
    const char *err = NULL;
    Py_ssize_t dim = query.len / 2, m = rows.len / 8;
    if (query.len % 2 || dim < 1 || matrix.len % dim || rows.len % 8 || out.len != m * 4)
        err = "int8 scan: buffer lengths do not match";
    int64_t total = 0;  /* the largest magnitude a sum can reach: 128 per unit of the query */
    const int16_t *q = query.buf;
    for (Py_ssize_t d = 0; !err && d < dim; d++) total += 128 * (int64_t)(q[d] < 0 ? -q[d] : q[d]);
    if (!err && total > INT32_MAX) err = "int8 scan: the query's scale could overflow int32";
    if (!err) {
        int bad;
        Py_BEGIN_ALLOW_THREADS
        bad = score_rows(matrix.buf, matrix.len / dim, dim, rows.buf, m, q, out.buf);
        Py_END_ALLOW_THREADS
        if (bad) err = "int8 scan: a row out of range";
    }
    PyBuffer_Release(&matrix);
    PyBuffer_Release(&rows);
    PyBuffer_Release(&query);
    PyBuffer_Release(&out);
    if (err) {
        PyErr_SetString(PyExc_ValueError, err);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"scores", scores, METH_VARARGS, "Approximate scores of rows of an int8 matrix for an int16 query."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_scan", "The int8 exact pass's inner loop.", -1,
                                    methods};

PyMODINIT_FUNC PyInit__scan(void) { return PyModule_Create(&module); }
