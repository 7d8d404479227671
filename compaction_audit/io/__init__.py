"""Bytes in: opening logs and turning them into typed tables."""
