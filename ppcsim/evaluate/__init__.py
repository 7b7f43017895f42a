"""The observer's measurements: utility and privacy of a run, computed outside the protocol."""
