"""Disguise methods, registered by the name a scenario file gives them."""

from __future__ import annotations

from parties.methods.base import Disguise, Param, Sent
from parties.methods.drbt import DRBT
from parties.methods.nmds import NMDS
from parties.methods.osbr import OSBR
from parties.methods.plain import Plain

METHODS: dict[str, type[Disguise]] = {cls.name: cls for cls in (DRBT, OSBR, Plain, NMDS)}


def method_class(name: str) -> type[Disguise]:
    """The class registered as ``name``; ValueError naming the known methods otherwise."""
    try:
        return METHODS[name]
    except KeyError:
        raise ValueError(f"unknown method '{name}' (known: {', '.join(METHODS)})") from None


__all__ = ["METHODS", "Disguise", "Param", "Sent", "method_class", "DRBT", "OSBR", "Plain", "NMDS"]
