"""Compatibility shim: the parts of Hermes' `tools` package that plugins import."""
