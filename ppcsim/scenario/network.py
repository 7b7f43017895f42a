"""A party's network link as the scenario's ``[network]`` table describes it (the relays of ``ppc run``
shape each party's connection to it: ppcsim.run.relay)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Link:
    """A network link: bandwidth in Mbit/s (None: unlimited) and one-way latency in milliseconds."""

    bandwidth_mbit: float | None = None
    latency_ms: float = 0.0

    @property
    def shaped(self) -> bool:
        return self.bandwidth_mbit is not None or self.latency_ms > 0

    def describe(self) -> str:
        if not self.shaped:
            return "loopback, unshaped"
        rate = f"{self.bandwidth_mbit:g} Mbit/s" if self.bandwidth_mbit is not None else "unlimited bandwidth"
        return f"{rate}, {self.latency_ms:g} ms one way"
