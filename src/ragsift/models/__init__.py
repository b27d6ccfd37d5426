"""Models, each kind behind one small protocol and loaded from disk or called at an endpoint:
dense embedders (``embedders``; multilingual-e5-small on ONNX Runtime in ``e5_onnx``), learned
sparse encoders (``sparse``), rerankers (``rerankers``), language models (``llm``: llama.cpp
in process, or an OpenAI-compatible endpoint, with an answer cache), and the one retry loop of
every HTTP client among them (``retry``)."""
