"""Scenarios: a scenario file loaded and every table and field checked (load), and how columns and k are
split over parties (partition)."""
