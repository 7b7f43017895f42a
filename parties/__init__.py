"""The party side: load one party's own columns, normalise, disguise, upload, receive the result."""
