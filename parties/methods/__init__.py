"""Disguise methods, registered by the name a scenario file gives them."""

from __future__ import annotations

from parties.methods.base import Disguise, Param, Sent
from parties.methods.cnmf import CNMF
from parties.methods.comnmf import ComNMF
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
from parties.methods.scnmf import SCNMF
from parties.methods.svd import SVD
from protos.schema import closest

METHODS: dict[str, type[Disguise]] = {
    cls.name: cls for cls in (DRBT, OSBR, Plain, NMDS, Rotation, Geometric, Noise, PCA, SVD, DCT, CNMF, SCNMF, ComNMF, OSBRNMDS)
}


def method_class(name: str) -> type[Disguise]:
    """The class registered as ``name``; ValueError naming the known methods otherwise."""
    try:
        return METHODS[name]
    except KeyError:
        close = closest(str(name), tuple(METHODS))
        hint = f"; did you mean '{close}'?" if close else ""
        raise ValueError(f"unknown method '{name}' (known: {', '.join(METHODS)}{hint})") from None


__all__ = ["METHODS", "Disguise", "Param", "Sent", "method_class", "DRBT", "OSBR", "Plain", "NMDS",
           "Rotation", "Geometric", "Noise", "PCA", "SVD", "DCT", "CNMF", "SCNMF", "ComNMF", "OSBRNMDS"]
