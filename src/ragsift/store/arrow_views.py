"""Arrow columns as numpy arrays and numpy arrays as Arrow arrays, without importing pandas.

pyarrow (26) imports pandas, when it is installed, on its first ``Array.to_numpy`` or
``ChunkedArray.to_numpy`` (its C++ conversion initialises pandas' static data, even for
``to_numpy``), its first ``pa.array(...)``, ``pa.chunked_array(...)`` or ``pa.scalar(...)`` (it
asks pandas whether the object is one of its own), and ``np.asarray`` of an Arrow array (through
``to_numpy``). Importing pandas costs 0.2-0.25 s of CPU, a quarter of a cold ``ragsift query``
that needs none of it. These helpers read an array's buffers (``np.frombuffer``: a view where
there is one chunk and no null) and build arrays from buffers (``pa.Array.from_buffers``):
the same values, pandas never imported. ``to_pylist`` and ``as_py`` import nothing and need no
helper.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa


def _chunks(col: pa.Array | pa.ChunkedArray) -> list[pa.Array]:
    return list(col.chunks) if isinstance(col, pa.ChunkedArray) else [col]


def _valid(a: pa.Array) -> np.ndarray | None:
    """Which values of ``a`` are not null (None: all of them)."""
    if a.null_count == 0:
        return None
    return _bits(a.buffers()[0], a.offset, len(a))


def _bits(buf: pa.Buffer | None, offset: int, n: int) -> np.ndarray:
    if buf is None:
        return np.ones(n, bool)
    start, skip = divmod(offset, 8)
    raw = np.frombuffer(buf, np.uint8, (skip + n + 7) // 8, start)
    return np.unpackbits(raw, bitorder="little")[skip:skip + n].astype(bool)


def numbers(col: pa.Array | pa.ChunkedArray, dtype: Any, fill: Any = 0) -> np.ndarray:
    """A column of integers or floats (one Arrow primitive type) as ``dtype``; a null becomes
    ``fill``. One chunk without nulls, of ``dtype`` already: a read-only view of its buffer."""
    out = []
    for a in _chunks(col):
        if not (pa.types.is_integer(a.type) or pa.types.is_floating(a.type)):
            raise TypeError(f"numbers() reads integer and float columns, not {a.type}")
        kind = "f" if pa.types.is_floating(a.type) else "i" if pa.types.is_signed_integer(a.type) else "u"
        width = np.dtype(f"<{kind}{a.type.bit_width // 8}")
        values = np.frombuffer(a.buffers()[1], width, len(a), a.offset * width.itemsize) if len(a) else \
            np.empty(0, width)
        values = values.astype(dtype, copy=False)
        valid = _valid(a)
        if valid is not None:
            values = np.where(valid, values, np.asarray(fill, dtype))
        out.append(values)
    if not out:
        return np.empty(0, dtype)
    return out[0] if len(out) == 1 else np.concatenate(out)


def booleans(col: pa.Array | pa.ChunkedArray, fill: bool = False) -> np.ndarray:
    """A boolean column as a numpy ``bool`` array; a null becomes ``fill``."""
    out = []
    for a in _chunks(col):
        if not pa.types.is_boolean(a.type):
            raise TypeError(f"booleans() reads boolean columns, not {a.type}")
        values = _bits(a.buffers()[1], a.offset, len(a))
        valid = _valid(a)
        if valid is not None:
            values = np.where(valid, values, fill)
        out.append(values)
    return np.concatenate(out) if out else np.empty(0, bool)


def mask_array(mask: np.ndarray) -> pa.Array:
    """A numpy ``bool`` array as an Arrow boolean array (``filter``'s argument)."""
    m = np.asarray(mask, bool)
    return pa.Array.from_buffers(pa.bool_(), len(m), [None, pa.py_buffer(np.packbits(m, bitorder="little"))])


def index_array(values: np.ndarray | Sequence[int], valid: np.ndarray | None = None) -> pa.Array:
    """Integers as an Arrow ``int64`` array (``take``'s argument); where ``valid`` is False, null."""
    v = np.ascontiguousarray(values, np.int64)
    bitmap = None
    if valid is not None and not np.all(valid):
        bitmap = pa.py_buffer(np.packbits(np.asarray(valid, bool), bitorder="little"))
    return pa.Array.from_buffers(pa.int64(), len(v), [bitmap, pa.py_buffer(v)])


def string_array(values: Sequence[str], large: bool = False) -> pa.Array:
    """Python strings as an Arrow ``string`` (or ``large_string``) array (``is_in``'s value set)."""
    data = [v.encode("utf-8") for v in values]
    offsets = np.zeros(len(data) + 1, np.int64 if large else np.int32)
    np.cumsum([len(d) for d in data], out=offsets[1:])
    return pa.Array.from_buffers(pa.large_string() if large else pa.string(), len(data),
                                 [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(data))])
