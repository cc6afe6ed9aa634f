"""Sentence-embedding similarity, the part of T-Eval's scoring that needs a model (the ``teval`` extra).

Upstream scores Plan (name/args similarity of plan steps) and Reason (the thought) with cosine similarities of
sentence-transformers embeddings: ``SentenceTransformer(bert_score_model)``, ``encode(..., convert_to_tensor=True)``,
``np.maximum(util.cos_sim(a, b).cpu().numpy(), 0)``. T-Eval's test.py passes ``all-mpnet-base-v2`` (English data);
ToLeaP's scripts/evaluate.py passes ``sentence-transformers/all-mpnet-base-v2``: the same model.

Nothing here is imported at module load: :func:`get_encoder` imports sentence-transformers (and numpy) on first use
and remembers, per process and model name, either the loaded encoder or why it could not be loaded. The scorer then
marks the metrics that need it as *not computed* (never 0). Tests install a stand-in with :func:`install`.

Where the model is loaded from (a deviation in place only, not in the model): when the name is all-mpnet-base-v2
(either spelling) and the ``teval`` extra's verified copy is installed, the model loads offline from that copy's
folder (:func:`pytest_toolbench.scorer_lib.embedding_models.local_path`: the Hub repository's files, sha256-checked), never by Hub
name; an installed copy that does not verify makes the similarity *not computed* with the reason. Any other name, or
no copy installed, loads by name as upstream does (a Hub id, a Hub cache entry or a local folder).
"""

from __future__ import annotations

from typing import Any, Protocol, Sequence

from pytest_toolbench.scorer_lib import embedding_models

EXTRA_HINT = "pip install 'pytest-toolbench[teval]'"
#: The label of an item whose similarity could not be computed (no ``teval`` extra): left out of its counts.
NOT_COMPUTED = "not_computed"


class Encoder(Protocol):
    """Cosine similarities (clamped at 0, as upstream) between texts."""

    name: str

    def similarity(self, left: Sequence[str], right: Sequence[str]) -> list[list[float]]:
        """``len(left) x len(right)`` matrix: each side encoded in one call, as upstream's plan matching does."""
        ...

    def pair(self, first: str, second: str) -> float:
        """One pair, encoded together in one call (upstream batches thought pairs the same way, up to 16 pairs)."""
        ...


class SentenceTransformerEncoder:
    """The upstream computation, verbatim in spirit: encode to tensors, ``util.cos_sim``, clamp at 0."""

    def __init__(self, name: str) -> None:
        from sentence_transformers import SentenceTransformer, util  # the optional extra

        import numpy

        self.name = name
        self._numpy = numpy
        self._util = util
        verified = embedding_models.local_path(name)  # ModelCopyError: reported as the reason it is unavailable
        self.source = str(verified) if verified is not None else name
        self._model = (SentenceTransformer(self.source, local_files_only=True) if verified is not None
                       else SentenceTransformer(name))

    def _cos(self, a: Any, b: Any) -> Any:
        return self._numpy.maximum(self._util.cos_sim(a, b).cpu().numpy(), 0)

    def similarity(self, left: Sequence[str], right: Sequence[str]) -> list[list[float]]:
        a = self._model.encode(list(left), convert_to_tensor=True)
        b = self._model.encode(list(right), convert_to_tensor=True)
        return [[float(v) for v in row] for row in self._cos(a, b)]

    def pair(self, first: str, second: str) -> float:
        embeddings = self._model.encode([first, second], convert_to_tensor=True)
        return float(self._cos(embeddings[0], embeddings[1])[0, 0])


_encoders: dict[str, Encoder | str] = {}
_installed: Encoder | None = None


def install(encoder: Encoder | None) -> None:
    """Use ``encoder`` for every model name (tests), or go back to loading real models (``None``)."""
    global _installed
    _installed = encoder


def get_encoder(name: str) -> tuple[Encoder | None, str | None]:
    """(encoder, None), or (None, why it is unavailable); a failure is remembered for the process."""
    if _installed is not None:
        return _installed, None
    cached = _encoders.get(name)
    if cached is None:
        try:
            cached = SentenceTransformerEncoder(name)
        except ImportError as exc:
            cached = f"sentence-transformers is not installed ({exc.name or exc}); {EXTRA_HINT}"
        except Exception as exc:  # noqa: BLE001 - no network, no cached weights, broken install...
            cached = f"the embedding model {name!r} could not be loaded ({type(exc).__name__}: {exc})"
        _encoders[name] = cached
    if isinstance(cached, str):
        return None, cached
    return cached, None


def availability() -> str:
    """A line for the run header: whether the extra is importable (the model itself loads on first use)."""
    if _installed is not None:
        return f"stand-in encoder {getattr(_installed, 'name', type(_installed).__name__)} (tests)"
    import importlib.util

    missing = [m for m in ("sentence_transformers", "networkx", "numpy") if importlib.util.find_spec(m) is None]
    if missing:
        return (f"NOT AVAILABLE ({', '.join(missing)} missing): Plan and Reason (thought) similarity are not "
                f"computed; {EXTRA_HINT}")
    return "sentence-transformers installed (model loaded on first use)"
