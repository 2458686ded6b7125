"""Compatibility shim: the parts of Hermes' `hermes_cli` package that plugins import.

Only a few modules are provided (profiles, config, plugins, commands,
approval_transport); importing any
other `hermes_cli` module fails with an error saying this host does not provide it.
"""
