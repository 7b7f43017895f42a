"""Combination forms: the ways dissimilarities computed on separate column blocks add up exactly.

A dissimilarity does not in general add across the column blocks of a
vertical partition, but parts of it do (a sum over columns, such as the squared
Euclidean distance of 004 eq. 3 or the numerator and denominator of eq. 5, adds over blocks of columns). Each registered
:class:`Form` declares, for one such way:

- the condensed arrays an upload in this form must carry (``arrays``), and
  those it may carry besides (``optional``), each over the party's
  m(m-1)/2 pairs;
- the public parameters it needs (``params``), and those that stand for an
  optional array when it is left out (``instead``: e.g. eq. 5's denominator
  is the party's attribute count when it does not vary over pairs);
- whether feature blocks can join it (``features``: only squared Euclidean
  distances, to which a block of rows turns exactly at the coordinator);
- its ``combine`` function, from the arrays summed over parties to the
  joined dissimilarities.

A party names the form it sends in the public ``metric`` parameter of its
upload header (the wire is unchanged: ``osbr`` sends ``euclidean``, ``gower``
or ``jaccard``). A new form is a function and one line in ``FORMS``; a
disguise that sends it declares the name (``Disguise.form``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from coordinator.errors import SessionError
from coordinator.types import Combined, Contribution

__all__ = ["FORMS", "Form", "Parts", "check_upload", "form_of"]


@dataclass
class Parts:
    """What a form's ``combine`` works on: the dissimilarity parties and the arrays they sent, summed.

    ``total(name)`` is the array ``name`` summed over every party that sent
    it, in the joined order (a fresh array the form may work on in place);
    ``features`` the feature parties' rows in the joined order (only for a
    form that takes them).
    """

    contributions: list[Contribution]
    total: Callable[[str], np.ndarray]
    n: int
    features: list[tuple[Contribution, np.ndarray]] = field(default_factory=list)

    @property
    def parties(self) -> str:
        return ", ".join(c.party for c in self.contributions)


@dataclass(frozen=True)
class Form:
    """One way of combining dissimilarities exactly across column blocks (see the module docstring)."""

    name: str
    combine: Callable[[Parts], Combined]
    #: Condensed arrays every upload in this form carries.
    arrays: frozenset[str]
    #: Condensed arrays an upload may carry besides.
    optional: frozenset[str] = frozenset()
    #: Public parameters every upload in this form carries.
    params: tuple[str, ...] = ()
    #: An optional array -> the public integer parameter that stands for it when it is not sent.
    instead: Mapping[str, str] = field(default_factory=dict)
    #: Whether feature blocks can join it: true only when the form is the Euclidean distance of the joined
    #: columns (feature rows then turn into squared distances exactly, and the joined columns stand for it).
    features: bool = False
    doc: str = ""


def _euclidean(parts: Parts) -> Combined:
    """Eq. 3 (004): the root of the squared Euclidean distances summed over every party's columns."""
    from scipy.spatial.distance import pdist  # only for feature blocks beside dissimilarities

    squared = parts.total("sqdist")
    for _, block in parts.features:
        squared += pdist(block, "sqeuclidean")
    converted = (f"; features of {', '.join(c.party for c, _ in parts.features)} turned into squared distances "
                 "at the coordinator and added") if parts.features else ""
    return Combined(dissimilarity=np.sqrt(squared, out=squared),
                    description=f"eq. 3: root of the summed squared distances of {parts.parties}{converted}")


def _jaccard(parts: Parts) -> Combined:
    """Eq. 4 (004): d = (r + s) / (q + r + s) from the counts q and r + s summed over parties."""
    q, rs = parts.total("q"), parts.total("rs")
    d = np.divide(rs, q + rs, out=np.zeros_like(rs), where=(q + rs) > 0)
    return Combined(dissimilarity=d, description=f"eq. 4: summed counts r+s / (q+r+s) of {parts.parties}")


def _gower(parts: Parts) -> Combined:
    """Eq. 5 (004): summed numerators over summed denominators (or attribute counts, when constant)."""
    contributions = parts.contributions
    numerator = parts.total("numerator")
    counted = [c for c in contributions if "denominator" not in c.names]  # a constant: the party's attribute count
    denominator = parts.total("denominator") if len(counted) < len(contributions) else np.zeros_like(numerator)
    denominator += sum(int(c.params["attributes"]) for c in counted)
    d = np.divide(numerator, denominator, out=np.zeros_like(numerator), where=denominator > 0)
    return Combined(dissimilarity=d, description=f"eq. 5: summed numerators / summed denominators of {parts.parties}")


#: The registered forms, by the name a party gives in its upload's ``metric`` parameter.
FORMS: dict[str, Form] = {
    "euclidean": Form("euclidean", _euclidean, frozenset({"sqdist"}), features=True,
                      doc="squared Euclidean distances, summed, then the root (eq. 3)"),
    "gower": Form("gower", _gower, frozenset({"numerator"}), optional=frozenset({"denominator"}),
                  instead={"denominator": "attributes"},
                  doc="eq. 5's numerators over its denominators (or the attribute counts)"),
    "jaccard": Form("jaccard", _jaccard, frozenset({"q", "rs"}), doc="eq. 4's counts q and r+s"),
}


def form_of(party: str, params: Mapping[str, str]) -> Form:
    """The registered form an upload's public ``metric`` names; SessionError naming the known ones."""
    metric = params.get("metric", "")
    if metric not in FORMS:
        raise SessionError(f"party '{party}': osbr metric {metric!r} is not one of {', '.join(FORMS)}")
    return FORMS[metric]


def check_upload(party: str, params: Mapping[str, str], names: set[str]) -> Form:
    """The form of a dissimilarity upload, once its arrays and public parameters match the form's declaration;
    SessionError naming the party, the form and what is missing otherwise."""
    form = form_of(party, params)
    allowed = form.arrays | form.optional
    if not form.arrays <= names or not names <= allowed:
        raise SessionError(f"party '{party}': osbr/{form.name} sends arrays {sorted(form.arrays)}, got {sorted(names)}")
    for key in form.params:
        if key not in params:
            raise SessionError(f"party '{party}': osbr/{form.name} needs the public parameter '{key}'")
    for array, key in form.instead.items():
        if array not in names:
            try:
                int(params.get(key, ""))
            except ValueError:
                raise SessionError(f"party '{party}': osbr/{form.name} without a {array} array needs '{key}'") from None
    return form
