"""llama-cpp-python's OpenAI-compatible server, with one pooled vector per text on /v1/embeddings.

Run by ``scripts/local_model.py`` (``start(embedding=True)``) with ``.venv-model``'s python and the
same arguments as ``python -m llama_cpp.server``. Gemma 3 270M is a generative model: its GGUF
declares no pooling, so llama.cpp answers an embedding request with one vector per *token*, which
no embedding client can use. llama.cpp pools when the context asks it to (``pooling_type``), but
the server's settings do not expose that parameter; this launcher makes every model the server
loads pool by the mean of its token vectors, then hands over to the server's own entry point.
"""

from __future__ import annotations

import llama_cpp  # type: ignore[import-not-found]  # .venv-model only
from llama_cpp.server.__main__ import main  # type: ignore[import-not-found]


class MeanPooledLlama(llama_cpp.Llama):  # type: ignore[misc]
    """A ``Llama`` whose context pools token vectors by their mean unless told otherwise."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("pooling_type", llama_cpp.LLAMA_POOLING_TYPE_MEAN)
        super().__init__(*args, **kwargs)


# The server looks ``llama_cpp.Llama`` up when it loads a model (llama_cpp/server/model.py).
llama_cpp.Llama = MeanPooledLlama

if __name__ == "__main__":
    main()
