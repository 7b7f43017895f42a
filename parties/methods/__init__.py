"""Disguise methods, registered by the name a scenario file gives them."""

from __future__ import annotations

from parties.methods.base import Disguise, Param, Sent
from parties.methods.dct import DCT
from parties.methods.drbt import DRBT
from parties.methods.geometric import Geometric
from parties.methods.nmds import NMDS
from parties.methods.noise import Noise
from parties.methods.osbr import OSBR
from parties.methods.osbr_nmds import OSBRNMDS
from parties.methods.pca import PCA
from parties.methods.plain import Plain
from parties.methods.rotation import Rotation
from parties.methods.svd import SVD

METHODS: dict[str, type[Disguise]] = {
    cls.name: cls for cls in (DRBT, OSBR, Plain, NMDS, Rotation, Geometric, Noise, PCA, SVD, DCT, OSBRNMDS)
}


def method_class(name: str) -> type[Disguise]:
    """The class registered as ``name``; ValueError naming the known methods otherwise."""
    try:
        return METHODS[name]
    except KeyError:
        raise ValueError(f"unknown method '{name}' (known: {', '.join(METHODS)})") from None


__all__ = ["METHODS", "Disguise", "Param", "Sent", "method_class", "DRBT", "OSBR", "Plain", "NMDS",
           "Rotation", "Geometric", "Noise", "PCA", "SVD", "DCT", "OSBRNMDS"]
