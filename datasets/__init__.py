"""This folder is installed with pagesim as ``pagesim._datasets`` (see pyproject.toml), so that
``pagesim.sources.datasets.load`` finds the same files in a checkout and in an installed wheel."""
