"""Placeholder: being written (registers nothing yet)."""
