"""A deployable tool-server template: ``app.py`` + ``Dockerfile`` + ``README.md``."""
