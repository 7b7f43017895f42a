"""The report: its typed model (model), the JSON Schema generated from it (schema), report.json and the run's
output files (outputs), report.html (html) and its figures (plots)."""
