"""Text without models: language detection, token counting, sentence splitting, the BM25
analyzers (and jieba's dictionary, ``segmenter``), key phrases, named entities, key sentences
(TextRank), the names of documents inside text (``links``), the prompts, clean text. (The
"did you mean" of names a caller got wrong is ``ragsift.names``, beside the registries it serves.)"""
from ragsift.text.analyzer import Analyzer
from ragsift.text.lang import detect_language, is_cjk_char
from ragsift.text.sentences import sentence_spans
from ragsift.text.tokens import count_tokens

__all__ = ["Analyzer", "detect_language", "is_cjk_char", "sentence_spans", "count_tokens"]
