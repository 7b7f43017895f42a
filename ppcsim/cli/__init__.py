"""The ``ppc`` command line."""
