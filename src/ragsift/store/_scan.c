/* An exact dense pass over a filter's rows at a quarter of the memory: each row's int8 copy
 * (``AnnIndex``'s ``vectors.i8``, one byte per dimension where the float32 vectors take four)
 * times the query quantised to int16, summed in int32. ``memindex`` keeps the best of these
 * approximate scores and scores them again exactly from the float32 vectors; where this module is
 * not built, the exact pass reads the float32 vectors for every row, to the same hits. Over large
 * filters a first pass reads each row's 4-bit copy (``vectors.u4``, half a byte per dimension:
 * ``scores4``) and keeps its best few thousand rows for the int8 pass.
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

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#include <immintrin.h>
#define HAVE_AVX2_PATH 1
#else
#define HAVE_AVX2_PATH 0
#endif

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

/* the row PREFETCH_ROWS after the i-th of the m asked for from memory, where it is in range: every
 * scan below reads rows in the caller's order, which the processor cannot guess */
static inline void prefetch_ahead(const char *matrix, Py_ssize_t nrows, Py_ssize_t row_bytes, const int64_t *rows,
                                  Py_ssize_t i, Py_ssize_t m) {
    if (i + PREFETCH_ROWS < m) {
        int64_t ahead = rows[i + PREFETCH_ROWS];
        if (ahead >= 0 && ahead < nrows) {
            const char *p = matrix + ahead * row_bytes;
            for (Py_ssize_t b = 0; b < row_bytes; b += 64) __builtin_prefetch(p + b, 0, 0);
        }
    }
}

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
        prefetch_ahead((const char *)matrix, nrows, dim, rows, i, m);
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

/* The 4-bit first pass: each row's dimensions as 4-bit codes (0..15), two to a byte, in blocks of 32
 * bytes: byte j of block b holds dimension 64b + j in its low nibble and 64b + 32 + j in its high one
 * (``memindex._Int4Copy`` writes them so, the dimensions padded to a multiple of 64 with code 0).
 * The query: one int8 weight per padded dimension. A row's score is the sum of code times weight,
 * at most 15 * 128 * dims in magnitude: int32 holds it for any row Python can map. */
static inline int32_t dot4(const uint8_t *restrict x, const int8_t *restrict q, Py_ssize_t blocks) {
    int32_t s = 0;
    for (Py_ssize_t b = 0; b < blocks; b++)
        for (int j = 0; j < 32; j++) {
            uint8_t v = x[32 * b + j];
            s += (int32_t)(v & 15) * q[64 * b + j] + (int32_t)(v >> 4) * q[64 * b + 32 + j];
        }
    return s;
}

static int score4_rows_plain(const uint8_t *matrix, Py_ssize_t nrows, Py_ssize_t row_bytes, const int64_t *rows,
                             Py_ssize_t m, const int8_t *q, int32_t *out) {
    Py_ssize_t blocks = row_bytes / 32;
    for (Py_ssize_t i = 0; i < m; i++) {
        int64_t r = rows[i];
        if (r < 0 || r >= nrows) return -1;
        prefetch_ahead((const char *)matrix, nrows, row_bytes, rows, i, m);
        out[i] = dot4(matrix + r * row_bytes, q, blocks);
    }
    return 0;
}

#if HAVE_AVX2_PATH
/* the same sums with AVX2: the nibbles split by a mask and a shift, multiplied by the weights as
 * unsigned by signed bytes into pairs of int16 (at most 2 * 15 * 128, two such summed: no
 * saturation), widened to int32 per block */
__attribute__((target("avx2"))) static int score4_rows_avx2(const uint8_t *matrix, Py_ssize_t nrows,
                                                             Py_ssize_t row_bytes, const int64_t *rows,
                                                             Py_ssize_t m, const int8_t *q, int32_t *out) {
    Py_ssize_t blocks = row_bytes / 32;
    const __m256i mask = _mm256_set1_epi8(0x0F), ones = _mm256_set1_epi16(1);
    for (Py_ssize_t i = 0; i < m; i++) {
        int64_t r = rows[i];
        if (r < 0 || r >= nrows) return -1;
        prefetch_ahead((const char *)matrix, nrows, row_bytes, rows, i, m);
        const uint8_t *x = matrix + r * row_bytes;
        __m256i acc = _mm256_setzero_si256();
        for (Py_ssize_t b = 0; b < blocks; b++) {
            __m256i v = _mm256_loadu_si256((const __m256i *)(x + 32 * b));
            __m256i lo = _mm256_and_si256(v, mask);
            __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), mask);
            __m256i ql = _mm256_loadu_si256((const __m256i *)(q + 64 * b));
            __m256i qh = _mm256_loadu_si256((const __m256i *)(q + 64 * b + 32));
            __m256i pairs = _mm256_add_epi16(_mm256_maddubs_epi16(lo, ql), _mm256_maddubs_epi16(hi, qh));
            acc = _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, ones));
        }
        __m128i s = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
        s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
        s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
        out[i] = _mm_cvtsi128_si32(s);
    }
    return 0;
}
#endif

static int use_avx2 = 0;

/* scores4(matrix, rows, query, out) -> None
 * matrix: uint8, nrows x row_bytes (a multiple of 32), row-major; rows: int64 (any order);
 * query: int8, 2 * row_bytes weights; out: int32, one per row, written. */
static PyObject *scores4(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer matrix, rows, query, out;
    if (!PyArg_ParseTuple(args, "y*y*y*w*", &matrix, &rows, &query, &out)) return NULL;
    const char *err = NULL;
    Py_ssize_t row_bytes = query.len / 2, m = rows.len / 8;
    if (query.len % 64 || row_bytes < 32 || matrix.len % row_bytes || rows.len % 8 || out.len != m * 4)
        err = "4-bit scan: buffer lengths do not match";
    if (!err) {
        int bad;
        Py_BEGIN_ALLOW_THREADS
#if HAVE_AVX2_PATH
        if (use_avx2)
            bad = score4_rows_avx2(matrix.buf, matrix.len / row_bytes, row_bytes, rows.buf, m, query.buf, out.buf);
        else
#endif
            bad = score4_rows_plain(matrix.buf, matrix.len / row_bytes, row_bytes, rows.buf, m, query.buf, out.buf);
        Py_END_ALLOW_THREADS
        if (bad) err = "4-bit scan: a row out of range";
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

/* set_avx2(flag) -> bool: whether the AVX2 path runs (only where the processor has it; for tests) */
static PyObject *set_avx2(PyObject *self, PyObject *arg) {
    (void)self;
    int want = PyObject_IsTrue(arg);
    if (want < 0) return NULL;
#if HAVE_AVX2_PATH
    __builtin_cpu_init();
    use_avx2 = want && __builtin_cpu_supports("avx2");
#else
    use_avx2 = 0;
#endif
    return PyBool_FromLong(use_avx2);
}

static PyMethodDef methods[] = {
    {"scores", scores, METH_VARARGS, "Approximate scores of rows of an int8 matrix for an int16 query."},
    {"scores4", scores4, METH_VARARGS, "Approximate scores of rows of a 4-bit matrix for an int8 query."},
    {"set_avx2", set_avx2, METH_O, "Use the AVX2 path of scores4 where the processor has it; returns whether it runs."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_scan", "The int8 exact pass's inner loop.", -1,
                                    methods};

PyMODINIT_FUNC PyInit__scan(void) {
#if HAVE_AVX2_PATH
    __builtin_cpu_init();
    use_avx2 = __builtin_cpu_supports("avx2");
#endif
    return PyModule_Create(&module);
}
