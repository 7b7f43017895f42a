"""The order of the tests under -n (tests/longest_first.py): the files of the longest tests first, a file's tests
together, a shared fixture's other tests after its leader."""

from __future__ import annotations

from types import SimpleNamespace

from longest_first import order


def item(nodeid: str, *fixtures: str) -> SimpleNamespace:
    return SimpleNamespace(nodeid=nodeid, fixturenames=["tmp_path", *fixtures])


def test_long_files_first_a_files_tests_together_and_a_shared_fixtures_followers_last():
    items = [item("t/a.py::one"), item("t/a.py::two"), item("t/b.py::short"), item("t/b.py::long[x]"),
             item("t/c.py::build", "site"), item("t/c.py::read", "site"), item("t/d.py::also_reads", "site"),
             item("t/e.py::unknown")]
    seconds = {"t/b.py::long[x]": 60, "t/c.py::build": 30, "t/a.py::two": 5}
    got = [i.nodeid for i in order(items, seconds, shared=("site",))]
    assert got == ["t/b.py::long[x]", "t/b.py::short", "t/c.py::build", "t/a.py::two", "t/a.py::one",
                   "t/e.py::unknown", "t/c.py::read", "t/d.py::also_reads"]
    # a group suffix of --dist loadgroup is not part of the id looked up
    assert [i.nodeid for i in order([item("t/a.py::x"), item("t/b.py::y@g")], {"t/b.py::y": 1}, ())] == \
        ["t/b.py::y@g", "t/a.py::x"]
    # no leader known: the fixture's tests keep their place; an id the table names and nobody collects is ignored
    assert order(items[4:7], {"t/gone.py::test": 99}, ("site",)) == items[4:7]
