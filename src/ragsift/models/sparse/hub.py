"""``splade:<model>``: any SPLADE model with a masked-LM head, through transformers."""
from __future__ import annotations

import threading

import numpy as np

from ragsift.errors import ModelError
from ragsift.models.sparse.base import DEFAULT_PASSAGE_TOP_K, DEFAULT_QUERY_TOP_K, EncoderBase


class HFSplade(EncoderBase):
    """A SPLADE model with a masked-LM head through transformers (``splade:<model>``).

    Memory: a batch holds a (windows, tokens, vocabulary) logits tensor, ~250 MB per 4 windows
    of 512 tokens for BERT's 30,522 tokens, 8x that for a 250k XLM-R vocabulary.
    """

    def __init__(self, model: str, max_tokens: int = 512, batch_size: int = 4,
                 passage_top_k: int | None = DEFAULT_PASSAGE_TOP_K,
                 query_top_k: int | None = DEFAULT_QUERY_TOP_K) -> None:
        super().__init__(passage_top_k, query_top_k)
        try:
            import torch
            from transformers import AutoModelForMaskedLM, AutoTokenizer
        except ImportError as e:
            raise ModelError("splade:<model> sparse encoders need torch and transformers: "
                             "pip install 'ragsift[hub]'") from e
        try:
            self._tok = AutoTokenizer.from_pretrained(model)
            self._model = AutoModelForMaskedLM.from_pretrained(model)
        except Exception as e:  # hub unreachable, bad path, not a masked-LM ...
            raise ModelError(f"cannot load SPLADE model {model!r}: {e}") from e
        if not getattr(self._tok, "is_fast", False):
            raise ModelError(f"SPLADE model {model!r} needs a fast tokenizer (tokenizer.json)")
        self._model.eval()
        self._torch = torch
        self.name = f"splade:{model}"
        limit = getattr(self._tok, "model_max_length", 512)
        self.max_tokens = min(max_tokens, limit if limit and limit < 100_000 else 512)
        self.batch_size = batch_size
        self.dim = int(self._model.config.vocab_size)
        self._lock = threading.Lock()

    def _encode_raw(self, texts, top_k):
        torch = self._torch
        out = []
        with self._lock, torch.inference_mode():
            for b in range(0, len(texts), self.batch_size):
                batch = texts[b:b + self.batch_size]
                # long texts become several windows (overflowing tokens), max-pooled below
                enc = self._tok(batch, max_length=self.max_tokens, truncation=True,
                                return_overflowing_tokens=True, padding=True, return_tensors="pt",
                                return_token_type_ids=False)
                owner = enc.pop("overflow_to_sample_mapping").tolist()
                logits = self._model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"]).logits
                # max over the real tokens first: log1p(relu(.)) is monotone, so it commutes with
                # the max, and the (windows, tokens, vocab) tensor is never copied
                logits.masked_fill_(enc["attention_mask"].unsqueeze(-1) == 0, float("-inf"))
                per_window = logits.max(dim=1).values
                pooled = torch.full((len(batch), self.dim), float("-inf"))
                for w, t in enumerate(owner):
                    pooled[t] = torch.maximum(pooled[t], per_window[w])
                for row in torch.log1p(torch.relu(pooled)).numpy():
                    ix = np.flatnonzero(row > 0)
                    out.append((ix, row[ix]))
        return out
