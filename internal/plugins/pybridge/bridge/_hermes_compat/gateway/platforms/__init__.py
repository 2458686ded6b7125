"""`gateway.platforms`: the adapter base classes platform plugins import."""
