"""Programs written the way published NumPy models are written (weights in dicts, objects,
closures and module globals; causal masks; KV caches), exported unmodified by the tests."""
