"""Page layout: words (or OCR lines) with their boxes -> lines in reading order -> paragraphs,
headings, list items, and the lines to drop (running heads and feet, page numbers).

- **Columns.** A page whose words leave an empty vertical band near the middle, with enough
  text on each side, is read as two columns: the left one, then the right one, between the
  lines that span both (titles, full-width figures and tables).
- **Paragraphs.** Lines follow each other in a paragraph when the gap between them is about a
  line's spacing and their size is the same; a hyphen at a line's end before a lower-case word
  is removed; lines of Chinese (or Japanese) join without a space.
- **Headings.** From the document's outline where it has one (each entry matched to a line of
  its page), else from font size and weight: lines clearly larger than the body text, or bold
  at its size, short and not ending a sentence; sizes give the levels.
- **Running heads, feet and page numbers.** Lines in the top or bottom tenth of the page, set
  apart from the body by at least a line's height, that repeat on at least half of the pages
  (digits aside), and lines there that are only a page number ("12", "Page 3 of 9", "- 4 -",
  "第 5 页"), are dropped.

(One module a stage: ``lines`` (words to lines to paragraphs), ``headings`` (running heads and
feet, headings by outline or font), ``tables`` (tables set as text).)
"""
from ragsift.ingest.loaders.layout.headings import (
    body_size,
    mark_headings_below_outline,
    mark_headings_by_font,
    mark_margins,
    match_outline,
)
from ragsift.ingest.loaders.layout.lines import (
    BULLET,
    CID,
    HYPHENS,
    MARGIN,
    PAGE_NUMBER,
    SENTENCE_END,
    WORD_GAP,
    Line,
    Word,
    bullet_text,
    cjk_unified,
    gutter,
    gutter_band,
    is_bold,
    is_rtl_line,
    join_lines,
    join_words,
    lines_of,
    logical_word,
    paragraphs,
    place_blanks,
    rtl_word_gaps,
    split_joined_script,
    without_furniture,
)
from ragsift.ingest.loaders.layout.tables import mark_text_tables, unstacked_rows

__all__ = ["BULLET", "CID", "HYPHENS", "Line", "MARGIN", "PAGE_NUMBER", "SENTENCE_END", "WORD_GAP", "Word", "body_size",
           "bullet_text", "cjk_unified", "gutter", "gutter_band", "is_bold", "is_rtl_line", "join_lines",
           "join_words", "lines_of", "logical_word", "mark_headings_below_outline", "mark_headings_by_font",
           "mark_margins", "mark_text_tables", "match_outline", "paragraphs", "place_blanks",
           "rtl_word_gaps", "split_joined_script", "unstacked_rows", "without_furniture"]
