"""Tables set as text: rows of words aligned in columns, read as a table with its header."""
from __future__ import annotations

from collections.abc import Sequence

from ragsift.ingest.loaders.layout.lines import BULLET, Line, Word, join_lines, join_words

ALIGN = 4  # points between two left edges that still make one column


def _aligned(x: float, xs: Sequence[float]) -> bool:
    """Whether a cell starting at ``x`` lines up with one of the columns starting at ``xs``."""
    return any(abs(x - s) <= ALIGN for s in xs)


def unstacked_rows(rows: list[list[list[str]]]) -> list[list[list[str]]]:
    """A ruled table's rows (each cell its lines), a row whose every filled cell holds the same
    number of lines (two or more) made that many rows: a table ruled only at its top and bottom
    comes out as one row of stacked cells ("paper title / author names" beside "15pt / 12pt")."""
    out: list[list[list[str]]] = []
    for row in rows:
        filled = [c for c in row if any(x.strip() for x in c)]
        counts = {len([x for x in c if x.strip()]) for c in filled}
        if len(filled) >= 2 and len(counts) == 1 and (n := counts.pop()) >= 2:
            lines = [[x for x in c if x.strip()] for c in row]
            out += [[[c[i]] if c else [""] for c in lines] for i in range(n)]
        else:
            out.append(row)
    return out


def _cells(ln: Line) -> list[list[Word]]:
    """A line's words in cells: a gap of a character's width or more between two words parts them."""
    out: list[list[Word]] = []
    for w in ln.words:
        if out and w.x0 - out[-1][-1].x1 < 1.0 * max(1.0, ln.size):
            out[-1].append(w)
        else:
            out.append([w])
    return out


def mark_text_tables(lines: list[Line]) -> None:
    """Tables set without rules (their columns aligned by space alone): three lines or more in a
    row, on one page and column, each of two cells or more whose left edges line up with the
    first line's; header lines just above them (two cells or more, within the table's width) go
    with them. Where the lines are spaced two ways, the closer ones are a cell's text wrapped
    onto a second line and join the row above. The first line carries the table's rows; the
    others are dropped."""
    i = 0
    while i < len(lines):
        head = lines[i]
        cells = _cells(head) if not (head.drop or head.heading) else []
        if len(cells) < 2:
            i += 1
            continue
        starts = [c[0].x0 for c in cells]
        run = [head]
        j = i + 1
        while j < len(lines):
            ln, prev = lines[j], run[-1]
            if ln.drop or ln.heading or ln.page != head.page or ln.column != head.column:
                break
            if ln.top - prev.bottom > 1.5 * prev.height:
                break
            mine = [c[0].x0 for c in _cells(ln)]
            if sum(1 for x in mine if _aligned(x, starts)) < min(2, len(mine)) or len(mine) < 2:
                break
            run.append(ln)
            j += 1
        if len(run) < 3:
            i += 1
            continue
        header = _table_header(lines, i, starts)
        for ln in header:
            for c in _cells(ln):  # a header's columns may be empty in every row below
                if not _aligned(c[0].x0, starts):
                    starts = sorted(starts + [c[0].x0])
        run = header + run
        starts = _empty_first_columns(run, starts)
        wrapped = set(_wrapped(run))
        rows: list[list[str]] = []
        for n, ln in enumerate(run):
            row = _table_row(ln, starts)
            if n in wrapped and rows:
                rows[-1] = [join_lines([a, b]) if a and b else a or b for a, b in zip(rows[-1], row)]
            else:
                rows.append(row)
        run[0].table = rows
        for ln in run[1:]:
            ln.drop = True
        i = j
    return None


def _empty_first_columns(run: Sequence[Line], starts: list[float]) -> list[float]:
    """Columns the table's first line leaves empty (a header over a column of row names): a cell
    whose left edge no column has, shared by another line of the table or ending before the first
    column begins, starts a column of its own instead of joining the nearest one."""
    loose = [c for ln in run for c in _cells(ln) if not _aligned(c[0].x0, starts)]
    for c in loose:
        x = c[0].x0
        if _aligned(x, starts):
            continue
        if sum(1 for d in loose if abs(d[0].x0 - x) <= ALIGN) >= 2 or c[-1].x1 < min(starts):
            starts = sorted([*starts, x])
    return starts


def _table_row(ln: Line, starts: list[float]) -> list[str]:
    row = [""] * len(starts)
    for c in _cells(ln):
        k = min(range(len(starts)), key=lambda n: abs(starts[n] - c[0].x0))
        row[k] = (row[k] + " " + join_words(c)).strip()
    return row


def _table_header(lines: Sequence[Line], first: int, starts: list[float]) -> list[Line]:
    """The header lines of the table whose first row is ``lines[first]`` (columns at ``starts``):
    up to six short-celled lines just above it (not list items), one at least of two cells or more
    sharing a column with the table; a line of one cell (a header cell's text wrapped) only on a
    column's start or under a header cell's."""
    block: list[Line] = []
    m = first
    while m > 0 and len(block) < 6:
        ln, below = lines[m - 1], lines[m]
        if (ln.drop or ln.heading or ln.table is not None or ln.page != below.page or ln.column != below.column
                or below.top - ln.bottom > 1.5 * ln.height):
            break
        cells = _cells(ln)
        if BULLET.match(ln.text) or any(len(join_words(c)) > 40 for c in cells):
            break  # a list item or a sentence, not a header
        if len(cells) >= 2 and not any(_aligned(c[0].x0, starts) for c in cells):
            break  # cells that share no column with the table
        block.insert(0, ln)
        m -= 1
    xs = starts + [c[0].x0 for ln in block if len(_cells(ln)) >= 2 for c in _cells(ln)]

    def fits(ln: Line) -> bool:
        cells = _cells(ln)
        return len(cells) >= 2 or _aligned(cells[0][0].x0, xs)

    while block and not fits(block[0]):
        block.pop(0)
    if not all(fits(ln) for ln in block) or not any(len(_cells(ln)) >= 2 for ln in block):
        return []
    return block


def _wrapped(run: Sequence[Line]) -> list[int]:
    """The lines of a table that carry on the row above (a cell's text wrapped): closer to it than
    rows are to each other, where the gaps come in two sizes."""
    gaps = [b.top - a.top for a, b in zip(run, run[1:])]
    if len(gaps) < 2 or max(gaps) < 1.25 * min(gaps):
        return []
    cut = (max(gaps) + min(gaps)) / 2
    return [n + 1 for n, g in enumerate(gaps) if g < cut]

