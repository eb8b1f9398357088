"""Stateful tables, bindings and custom operations."""
