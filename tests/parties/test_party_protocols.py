"""The party's protocol registry (parties.protocols): the built-in protocols by name, and a name the party does
not know refused before it sends anything."""

from __future__ import annotations

import pytest

from parties.errors import PartyError
from parties.protocols import PROTOCOLS, Mpc, SecureAggregation, Upload, party_protocol


def test_the_built_in_protocols_are_registered_by_name():
    assert {name: type(party_protocol(name)) for name in ("upload", "secure_aggregation", "mpc")} == {
        "upload": Upload, "secure_aggregation": SecureAggregation, "mpc": Mpc}
    assert set(PROTOCOLS) >= {"upload", "secure_aggregation", "mpc"}


def test_an_unknown_protocol_is_refused_naming_it_and_the_known_ones():
    with pytest.raises(PartyError, match="by protocol 'column_sums', which this party does not know \\(it knows "
                                         "upload, secure_aggregation, mpc\\): refusing before sending anything"):
        party_protocol("column_sums")


def test_only_the_protocols_that_keep_columns_take_a_party_that_names_no_method():
    assert [party_protocol(n).terms.columns_at_home for n in ("upload", "secure_aggregation", "mpc")] == \
        [False, True, True]
