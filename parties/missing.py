"""Missing values in a CSV party's columns: refused by default, or dropped or filled by a declared rule.

A cell that is empty or ``?`` (UCI's mark) is missing. The ``missing``
option of a CSV source (in ``[data]``, or in a party's table beside its own
``data`` file) says what happens to it:

- ``"refuse"`` (default): the party stops before it sends anything, naming
  the file, the column, the line and how many cells of the column are
  missing;
- ``"drop"``: the party leaves out every record with a missing cell in any of
  its own columns; the coordinator's join then leaves the record out of the
  whole session (it keeps the records every party holds, and reports how
  many each party lost);
- ``"mean"``: a numeric column's missing cells take the mean of its other
  cells (a text column is refused: use ``"mode"``);
- ``"mode"``: the column's most frequent value (the smallest of equally
  frequent ones), numeric or text.

A missing cell never becomes a category of its own: text columns (``osbr``'s
``categorical``) are coded after the rule is applied.
"""

from __future__ import annotations

import numpy as np

from parties.data import codes, to_numbers
from parties.errors import PartyError

#: What a missing cell holds.
MISSING_CELLS = ("", "?")
#: The rules of the ``missing`` option; the first is the default.
RULES = ("refuse", "drop", "mean", "mode")
#: How a message tells the user to declare a rule.
DECLARE = "declare missing = \"drop\", \"mean\" or \"mode\" (in [data], or in the party's table beside its own file)"


def columns_with_rule(cells: dict[str, list[str]], wanted: list[str], text: set[str], rule: str, where: str,
                      first: int) -> tuple[np.ndarray, np.ndarray]:
    """The party's columns ``wanted`` as an (m' x d) float array, and the mask of the m records kept (all but
    those dropped under ``"drop"``).

    Parameters
    ----------
    cells : dict of str to list of str
        Each column's cells as read (``parties.data.read_csv_columns``).
    text : set of str
        Columns of nominal text, coded as integers (``parties.data.codes``) after the rule is applied.
    rule : str
        One of ``RULES``.
    where : str
        The file, as messages name it.
    first : int
        The line of the first record (2 after a header row, 1 without one).

    Raises
    ------
    PartyError
        A missing cell under ``"refuse"`` (file, column, line, count), ``"mean"`` of a text column, a column
        whose every cell is missing, or no record left after ``"drop"``.
    """
    m = len(cells[wanted[0]]) if wanted else 0
    values = {c: np.array(cells[c], dtype=object) for c in wanted}
    absent = {c: np.isin(values[c], MISSING_CELLS) for c in wanted}
    if rule == "refuse":
        for c in wanted:
            if absent[c].any():
                row = int(np.argmax(absent[c]))
                raise PartyError(f"{where}, column '{c}', line {row + first}: a missing value "
                                 f"({values[c][row]!r}; {int(absent[c].sum())} of {m} cells of the column are "
                                 f"missing); {DECLARE}")
    keep = np.ones(m, dtype=bool)
    if rule == "drop":
        for c in wanted:
            keep &= ~absent[c]
        if m and not keep.any():
            raise PartyError(f"{where}: every record has a missing value in the columns {', '.join(wanted)}; "
                             "missing = \"drop\" leaves none")
    out = []
    for c in wanted:
        gone, cell = absent[c], values[c]
        if rule in ("mean", "mode") and gone.all() and m:
            raise PartyError(f"{where}, column '{c}': every cell is missing; nothing to take the {rule} of")
        if c in text:
            if rule == "mean" and gone.any():
                raise PartyError(f"{where}, column '{c}': missing = \"mean\" cannot fill a text column; "
                                 "use \"mode\" or \"drop\"")
            if rule == "mode" and gone.any():
                cell = cell.copy()
                cell[gone] = _mode(cell[~gone])
            out.append(codes([str(v) for v in cell[keep]]))
            continue
        number = to_numbers([("0" if g else str(v)) for v, g in zip(cell, gone)], f"{where}, column '{c}'", first)
        if rule == "mean" and gone.any():
            number[gone] = number[~gone].mean()
        elif rule == "mode" and gone.any():
            number[gone] = _mode(number[~gone])
        out.append(number[keep])
    X = np.column_stack(out) if out else np.empty((int(keep.sum()), 0))
    return X, keep


def _mode(values: np.ndarray):
    """The most frequent of ``values``; the smallest (in sorted order) of equally frequent ones."""
    uniq, counts = np.unique(values, return_counts=True)
    return uniq[int(np.argmax(counts))]
