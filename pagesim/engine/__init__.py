"""Layer 5: the engine's stages, ``simulate``, several processes, ``sweep``, the timing model and ``warm``."""
