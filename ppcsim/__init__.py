"""ppc-sim: command line and launcher for multi-party privacy-preserving clustering scenarios."""

__version__ = "0.1.0"

import os as _os

# gRPC's C core logs its own errors (e.g. a port it cannot bind) to stderr next to
# ppc's one-line message; keep it quiet unless the user asks for its logs.
_os.environ.setdefault("GRPC_VERBOSITY", "NONE")
