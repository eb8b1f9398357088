"""Chaos injection: faults and profiles."""
