"""Shared services benchmarks use through the session (the Wikipedia client, retrieval indexes).

A resource owns its I/O (HTTP, on-disk caches) so benchmarks stay free of transport code; it is
started once per run, shared by every episode, and closed when the run ends.
"""
