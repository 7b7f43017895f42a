"""The coordinator: sessions, the join on record id, clustering, and the byte ledger."""
