"""ppc-sim: command line and launcher for multi-party privacy-preserving clustering scenarios."""

__version__ = "0.1.0"


def simulate(scenario, processes: bool = False, **options):
    """Run a scenario and return a ``ppcsim.api.Run`` (see ppcsim.api.simulate and docs/api.md)."""
    from ppcsim.api import simulate as run

    return run(scenario, processes, **options)
