"""Benchmarks: ``python -m bench <name> ...``; every result is JSON."""
