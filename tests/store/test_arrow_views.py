"""store.arrow_views: Arrow columns read and built through their buffers, the same values as
pyarrow's conversions, and pandas never imported (checked in a new process)."""
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

from ragsift.store.arrow_views import booleans, index_array, mask_array, numbers, string_array


@pytest.mark.parametrize("typ", [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint32(), pa.uint64(),
                                 pa.float32(), pa.float64()])
def test_numbers_are_pyarrows_values(typ):
    col = pa.chunked_array([pa.array([1, 2, 3], typ), pa.array([4, None, 6], typ).slice(1), pa.array([], typ)])
    got = numbers(col, np.float64, fill=-1)
    assert got.tolist() == [1, 2, 3, -1, 6]
    one = pa.array(list(range(10)), typ).slice(3, 4)
    assert numbers(one, np.int64).tolist() == [3, 4, 5, 6]
    assert numbers(pa.chunked_array([], typ), np.int64).tolist() == []


def test_booleans_masks_indices_and_strings_round_trip():
    flags = pa.array([True, None, False, True, True, False, True, False, True, True]).slice(1)
    assert booleans(flags).tolist() == [False, False, True, True, False, True, False, True, True]
    assert booleans(pa.chunked_array([flags]), fill=True).tolist()[0] is True
    m = np.array([True, False, True] * 5)
    values = pa.array(range(15))
    assert values.filter(mask_array(m)).to_pylist() == [i for i in range(15) if m[i]]
    assert values.take(index_array([4, 0, 14])).to_pylist() == [4, 0, 14]
    words = ["a", "", "监督学习", "x" * 300]
    assert string_array(words).to_pylist() == words and string_array(words, large=True).type == pa.large_string()
    assert string_array([]).to_pylist() == []


def test_pandas_is_never_imported():
    code = ("import sys, numpy as np, pyarrow as pa, pyarrow.ipc as ipc\n"
            "from ragsift.store.arrow_views import booleans, index_array, mask_array, numbers, string_array\n"
            "sink = pa.BufferOutputStream()\n"
            "batch = pa.RecordBatch.from_arrays([index_array([1, 2, 3]), mask_array(np.array([1, 0, 1], bool)),\n"
            "                                    string_array(['a', 'b', 'c'])], ['i', 'b', 's'])\n"
            "w = ipc.new_file(sink, batch.schema); w.write_batch(batch); w.close()\n"
            "t = ipc.open_file(sink.getvalue()).read_all()\n"
            "assert numbers(t.column('i'), np.int64).tolist() == [1, 2, 3]\n"
            "assert booleans(t.column('b')).tolist() == [True, False, True]\n"
            "assert t.column('i').chunk(0).filter(mask_array(np.array([0, 1, 1], bool))).to_pylist() == [2, 3]\n"
            "print('pandas' in sys.modules)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "False"
