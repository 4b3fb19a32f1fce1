"""Compiled core of toksmith (Cython). Nothing here is public API."""
