"""The recording proxy and its CA."""
