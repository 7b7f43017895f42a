"""coordinator.upload.Upload: checks on one party's upload stream, as early and as cheaply as they can be made."""

from __future__ import annotations

import numpy as np
import pytest

from coordinator.errors import SessionError
from coordinator.upload import Upload
from parties.client import upload_messages
from parties.methods import Sent
from protos.serde import Layout


def test_finite_values_whose_sum_overflows_are_accepted_and_an_infinity_is_not():
    for data, bad in ((np.array([[1e308], [1e308], [-1.0]]), None), (np.array([[1.0], [np.inf], [2.0]]), "(1, 0)")):
        ids = np.arange(3)
        messages = list(upload_messages("s", "a", "none", {}, ids, [Sent("data", data, Layout.ROWS)], 1, 1 << 20))
        upload = Upload("a", messages[0].header)
        for m in messages[1:]:
            upload.add(m)
        if bad is None:
            np.testing.assert_array_equal(upload.finish().arrays["data"], data)
        else:
            with pytest.raises(SessionError, match=rf"NaN or infinite values \(1 of 3, the first at index \{bad[:-1]}\)"):
                upload.finish()
