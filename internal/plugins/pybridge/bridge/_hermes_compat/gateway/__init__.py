"""Compatibility package for platform plugins written against upstream's gateway
(`from gateway.platforms.base import BasePlatformAdapter`, `from gateway.config import
Platform, PlatformConfig`). Under the Go hermes host the adapter object lives in the
plugin's process; the bridge creates it, connects it and forwards its messages."""
