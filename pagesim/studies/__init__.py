"""The computations behind each notebook, one module per document, so notebooks hold no logic:
each function runs pagesim and returns a tidy pandas DataFrame (or a dict of figures)."""
