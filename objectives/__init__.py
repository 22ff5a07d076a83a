"""Objectives: db_bench discovery, workloads, the runner, output parsing, metrics and scores."""
