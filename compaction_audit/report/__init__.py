"""The one report model and the renderers that read it."""
