"""The coordinator's part of each protocol: objects that drive a session, each with its own state and lock."""
