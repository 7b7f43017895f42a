"""What one party needs to know to run: its data, its columns, its method, its seed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from parties.methods import method_class
from parties.normalize import NORMALIZATIONS

#: Values the ``dtype`` of a party may take: what its arrays travel as.
DTYPES = ("float64", "float32")
#: The message for a party that lists no columns.
EMPTY_COLUMNS = "'columns' is empty"


@dataclass(frozen=True)
class PartyConfig:
    """One party's own settings, as read from its ``[[parties]]`` table.

    ``source`` selects a registered kind of source (``parties.sources``):
    ``sklearn:<name>``, ``synthetic:blobs`` (with ``source_options``, the
    kind's options: rows, columns, clusters, cluster_std, seed) or, the
    fallback, a CSV path (absolute); ``id_column``
    names the CSV's id column (built-in sets use the row number).
    ``label_column`` is the ground truth column, which the party never loads.
    """

    name: str
    source: str
    columns: tuple[str, ...]
    method: str
    params: dict[str, Any] = field(default_factory=dict)
    normalize: str = "zscore"
    #: What the party's arrays travel as: "float64", or "float32" for half the bytes (rounded to ~7 digits).
    dtype: str = "float64"
    id_column: str | None = None
    label_column: str | None = None
    #: Seeds the disguise and the pseudonym key; None: the party draws one from its own entropy when it runs.
    seed: int | None = None
    source_options: dict[str, Any] = field(default_factory=dict)

    def check(self) -> list[str]:
        """Every problem with this configuration that needs no data, as messages."""
        errors = []
        if not self.columns:
            errors.append(EMPTY_COLUMNS)
        dupes = sorted({c for c in self.columns if self.columns.count(c) > 1})
        if dupes:
            errors.append(f"'columns' lists {', '.join(dupes)} more than once")
        if self.label_column and self.label_column in self.columns:
            errors.append(f"column '{self.label_column}' is the label column and is never sent")
        if self.id_column and self.id_column in self.columns:
            errors.append(f"column '{self.id_column}' is the id column, not a data column")
        if self.dtype not in DTYPES:
            errors.append(f"'dtype' must be one of {', '.join(DTYPES)}, got {self.dtype!r}")
        if self.normalize not in NORMALIZATIONS:
            errors.append(f"'normalize' must be one of {', '.join(NORMALIZATIONS)}, got {self.normalize!r}")
        try:
            cls = method_class(self.method)
        except ValueError as exc:
            return errors + [str(exc)]
        if cls.nonnegative and self.normalize == "zscore":
            errors.append(f"method '{self.method}' factorises non-negative data only, and z-scores are negative: "
                          "set normalize = \"minmax\" (or \"none\" for non-negative columns)")
        problems = cls.check_params(self.params)
        return errors + (problems or cls.check_columns(self.params, list(self.columns)))

    @property
    def effective_params(self) -> dict[str, Any]:
        """The method's parameters with its defaults filled in (as recorded in the report)."""
        defaults = {k: spec.default for k, spec in method_class(self.method).params.items() if not spec.required}
        return {**defaults, **self.params}

    @property
    def text_columns(self) -> tuple[str, ...]:
        """Columns that may hold text (nominal columns of osbr's gower metric)."""
        return tuple(self.params.get("categorical", ()))
