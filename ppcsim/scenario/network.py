"""A party's network link as the scenario's ``[network]`` table describes it (the relays of ``ppc run``
shape each party's connection to it: ppcsim.run.relay)."""

from __future__ import annotations

from dataclasses import dataclass

from protos.schema import Param, unknown

#: The fields of ``[network]`` and of each ``[network.<party>]`` table.
LINK = {
    "bandwidth_mbit": Param(float, above=0, rule="a positive number"),
    "latency_ms": Param(float, 0, minimum=0, rule="a positive number"),
}


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


def link(table: dict, where: str, base: Link, errors: list[str]) -> Link:
    values: dict[str, float] = {}
    for key, param in LINK.items():
        if key in table:
            problem = param.check(key, table[key])
            if problem:
                errors.append(f"{where}: {problem}")
            else:
                values[key] = float(table[key])
    return Link(bandwidth_mbit=values.get("bandwidth_mbit", base.bandwidth_mbit),
                latency_ms=values.get("latency_ms", base.latency_ms))


def links(table, parties: list[str], errors: list[str]) -> dict[str, Link]:
    """``[network]`` (every party's link) and ``[network.<party>]`` (one party's), by party."""
    if not isinstance(table, dict):
        errors.append("[network] must be a table")
        return {}
    for key, value in table.items():
        if key not in LINK and not (isinstance(value, dict) and key in parties):
            errors.append(f"[network]: {unknown(key, (*LINK, 'or a party' + chr(39) + 's table'))}")
    shared = link(table, "[network]", Link(), errors)
    return {p: link(table.get(p, {}), f"[network.{p}]", shared, errors) if isinstance(table.get(p), dict) else shared
            for p in parties}
