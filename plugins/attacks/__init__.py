"""Built-in poisoning attacks (docs/poisoning.md)."""
