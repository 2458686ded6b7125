"""hermes-go's stand-in for the parts of upstream's `agent` package plugins import."""
