"""One run: the provider interface, options, the runner and its stages, scoring, recordings,
shards and progress."""
