"""The paper reproduction (``ppc reproduce``): its computations (reproduction), the published figures
(paper004, thesis000) and docs/reproduction.md (markdown)."""
