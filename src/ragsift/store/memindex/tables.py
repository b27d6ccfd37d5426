"""``ParentTable``: one generation's parents for look-up by id, in memory or (large stores) as a
mapped Arrow file."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa

from ragsift.store.memindex.rows import IdIndex
from ragsift.store.memindex.saved import random_access_map, saved_folder


class ParentTable:
    """One generation's parents for look-up by id: held in memory, or (given a ``directory``, in
    large stores) written once to an uncompressed Arrow file there and mapped without read-ahead
    (a look-up reads only the pages of the rows it takes)."""

    BATCH = 65_536

    def __init__(self, table: Callable[[], pa.Table], directory: Path | None) -> None:
        if directory is None:
            tbl = table().combine_chunks()  # small segments (larger ones are saved): one batch
        else:
            path = directory / "parents.arrow"
            if not path.exists():
                tbl = table()
                with saved_folder(directory) as tmp, pa.OSFile(str(tmp / path.name), "wb") as sink, \
                        pa.ipc.new_file(sink, tbl.schema) as writer:
                    # record batches of BATCH rows, however small the chunks the scan gave (a look-up
                    # takes from each batch it touches: a million parents in 1,024-row chunks made a
                    # look-up of 60 ids 55 takes, 7 ms); one batch's worth copied at a time
                    for start in range(0, tbl.num_rows, self.BATCH):
                        writer.write_batch(tbl.slice(start, self.BATCH).combine_chunks().to_batches()[0])
            reader = pa.ipc.open_file(pa.BufferReader(pa.py_buffer(random_access_map(path))))
            tbl = pa.Table.from_batches([reader.get_batch(i) for i in range(reader.num_record_batches)],
                                        schema=reader.schema)
        # one record batch per chunk: a take across a whole chunked table reads every chunk
        self.batches = tbl.to_batches()
        self.starts = np.cumsum([0] + [b.num_rows for b in self.batches])
        self.ids = IdIndex(tbl.column("parent_id").combine_chunks() if tbl.num_rows else pa.array([], pa.string()))

    def take(self, parent_ids: Sequence[str], columns: list[str] | None = None) -> pa.Table:
        """The rows of the ids found (those ``columns`` of them, else all), in row order."""
        rows = np.sort(self.ids.rows(parent_ids))
        rows = rows[rows >= 0]
        which = np.searchsorted(self.starts, rows, side="right") - 1
        parts = [(self.batches[b] if columns is None else self.batches[b].select(columns))
                 .take(pa.array(rows[which == b] - self.starts[b])) for b in np.unique(which)]
        if not parts:
            return pa.table({"parent_id": pa.array([], pa.string())})
        return pa.Table.from_batches(parts)
