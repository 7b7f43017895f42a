"""ppc-sim: command line and launcher for multi-party privacy-preserving clustering scenarios."""

__version__ = "0.1.0"
