"""LLM providers: the abstract interface, LiteLLM (real models) and replay (recorded answers)."""
