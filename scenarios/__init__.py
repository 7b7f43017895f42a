"""Bundled scenario files (TOML) and their small data sets."""
