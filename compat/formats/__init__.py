"""Outputs: one module per format, each turning a Report into text."""

FORMATS = ("text", "json")
