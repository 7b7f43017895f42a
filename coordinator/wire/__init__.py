"""The coordinator's side of the wire: decoding requests and encoding replies."""
