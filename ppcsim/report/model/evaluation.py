"""The report's sections the observer measures: utility and privacy (the attacks' scores)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ppcsim.report.model.base import ABSENT, Absent, Section


@dataclass(kw_only=True)
class Observer(Section):
    """What repeats the simulation, known to the observer (``ppc run``) alone.

    Attributes
    ----------
    seed : int
        The scenario's seed.
    party_seeds : object
        Every party's seed (its disguise's secrets derive from it).
    """

    seed: int
    party_seeds: dict[str, int | None]


@dataclass(kw_only=True)
class Profile(Section):
    """A measure at each neighbourhood size k = 3..10 and its mean (000 eqs. 5.21-5.23).

    Attributes
    ----------
    mean : number
        The mean over k.
    by_k : object
        The measure at each k (keys are k as text).
    """

    OPEN = True
    mean: float
    by_k: dict[str, float] | Absent = ABSENT
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class FixedPoint(Section):
    """Secure aggregation: the fixed-point error of the last round's distances.

    Attributes
    ----------
    scale_bits : int
        Values are sent times 2^scale_bits.
    max_abs_error : number
        The largest error of a distance read by the arbiter.
    bound : number
        The bound on it (parties x 2^-(scale_bits + 1)).
    """

    scale_bits: int
    max_abs_error: float
    bound: float


@dataclass(kw_only=True)
class Accuracy(Section):
    """One classifier's cross-validated accuracy on the disguised and on the original data.

    Attributes
    ----------
    disguised : number
        On the coordinator's joined disguised features.
    original : number
        On the original joined (normalised) columns, with the same folds.
    """

    disguised: float
    original: float


@dataclass(kw_only=True)
class Classification(Section):
    """Stratified cross-validated accuracy of classifiers of the true labels (000 §5.3, 003 Table I).

    Attributes
    ----------
    folds : int
        Folds (10, fewer when a class has fewer records).
    seed : int
        The folds' shuffle: scikit-learn's ``StratifiedKFold(folds, shuffle=True, random_state=seed)``.
    records : int
        Records classified (a seeded sample on large data).
    classifiers : object
        Per classifier (``knn4``, ``svm_linear``, ``svm_poly``, ``svm_rbf``, ``svm_sigmoid``, ...), its Accuracy.
    """

    folds: int
    seed: int
    records: int
    classifiers: dict[str, Accuracy]


@dataclass(kw_only=True)
class Utility(Section):
    """How well the disguised clustering kept the original one, measured by the observer.

    Agreement records (``vs_original``, ...) map a metric's name to its value (``ari``, ``nmi``,
    ``misclassification``, ``variation_of_information``, ``f_measure``, ...).

    Attributes
    ----------
    stress : number
        Stress (004 eq. 6) between the original and the coordinator's distances, on sampled records.
    stress_records : int
        The records stress was measured on.
    reference : str
        What the clustering is compared with, in words.
    labels_equal_same_init : bool
        Secure aggregation: whether the labels equal scikit-learn's KMeans from the same initial records.
    vs_same_init : object
        Secure aggregation: agreement with that KMeans.
    fixed_point : FixedPoint
        Secure aggregation: the fixed-point error.
    np : Profile
        Neighbourhood preservation (000 eq. 5.21).
    cc : Profile
        Class compactness of the disguised data (000 eq. 5.22), with true labels.
    cc_original : Profile
        Class compactness of the original data (000 eq. 5.23), with true labels.
    vs_original : object
        Agreement with the same clustering of the original joined data.
    reference_original : str
        Secure aggregation: what ``vs_original`` compares with.
    vs_truth : object
        Agreement with the data's true labels, when it has them.
    original_vs_truth : object
        Agreement of the original data's clustering with the true labels.
    classification : object
        With true labels: classifiers' cross-validated accuracy on the disguised and the original data
        (Classification), or why it was Skipped.
    """

    OPEN = True
    stress: float | Absent = ABSENT
    stress_records: int | Absent = ABSENT
    reference: str | Absent = ABSENT
    labels_equal_same_init: bool | Absent = ABSENT
    vs_same_init: dict[str, float] | Absent = ABSENT
    fixed_point: FixedPoint | Absent = ABSENT
    np: Profile | Absent = ABSENT
    cc: Profile | Absent = ABSENT
    cc_original: Profile | Absent = ABSENT
    vs_original: dict[str, float]
    reference_original: str | Absent = ABSENT
    vs_truth: dict[str, float] | Absent = ABSENT
    original_vs_truth: dict[str, float] | Absent = ABSENT
    classification: Classification | Skipped | Absent = ABSENT
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class Skipped(Section):
    """A measurement that was not made, and why.

    Attributes
    ----------
    knowledge : str
        What the attacker would have known.
    skipped : str
        Why it was not made (``--no-attacks``, a metric without Euclidean distances, ...).
    """

    knowledge: str | Absent = ABSENT
    skipped: str


@dataclass(kw_only=True)
class Privacy002(Section):
    """Column privacy as 002 §6.1.1 defines it.

    Attributes
    ----------
    columns : object
        Per original column.
    min : number
        The lowest column's.
    mean : number
        The mean over columns.
    spread : object
        Standard deviations of ``min`` and ``mean`` over the draws of the known records.
    median : object
        Medians of ``min`` and ``mean`` over those draws.
    iqr : object
        Interquartile ranges of ``min`` and ``mean`` over those draws.
    """

    columns: dict[str, float]
    min: float
    mean: float
    spread: dict[str, float] | Absent = ABSENT
    median: dict[str, float] | Absent = ABSENT
    iqr: dict[str, float] | Absent = ABSENT


@dataclass(kw_only=True)
class Distortion(Section):
    """001's distortion measures (eqs. 2.7-2.11) of one matrix against the original.

    Attributes
    ----------
    vd : number
        Value difference.
    rp : number
        Average change of rank.
    rm : number
        Share of values keeping their rank.
    cp : number or null
        Average change of a column's rank by its range-normalised mean; null when two columns' means are
        within 1e-9 of each other (no rank order).
    ck : number or null
        Share of columns keeping that rank; null when CP is.
    cm : number
        001's CM (eq. 7.1): mean correlation of each column with its counterpart (1: a shifted copy).
    cca : number
        001's CCA (eqs. 7.9-7.10): canonical correlations summed over the original's columns (1: any invertible
        linear map, a rotation); also of a block with fewer columns.
    knnm : number
        001's knnM (eq. 7.12), k = 5: mean change of a neighbour's rank in the kNN join (0: every neighbourhood
        kept); also of a block with fewer columns.
    knnm_neighbours : number
        knnM as 001's Table 7.5 reports it, k = 5: neighbours kept among the 5 nearest (5: all).
    """

    OPEN = True
    vd: float | Absent = ABSENT
    rp: float | Absent = ABSENT
    rm: float | Absent = ABSENT
    cp: float | None | Absent = ABSENT
    ck: float | None | Absent = ABSENT
    cm: float | Absent = ABSENT
    cca: float | Absent = ABSENT
    knnm: float | Absent = ABSENT
    knnm_neighbours: float | Absent = ABSENT
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class AttackScore(Section):
    """How well one attack reconstructed the original columns (column privacy: 0 = recovered exactly).

    Attributes
    ----------
    knowledge : str
        What the attacker knew, in words.
    estimator : str
        How it estimated, in words.
    columns : object
        Column privacy of each original column (002, as measured here).
    min : number
        The lowest column's.
    mean : number
        The mean over columns.
    privacy_002 : Privacy002
        The same by 002 §6.1.1's definition.
    vd : number
        001's value difference of the estimate (eq. 2.7).
    rp : number
        001's RP of the estimate (first draw).
    rm : number
        001's RM of the estimate (first draw).
    cp : number or null
        001's CP of the estimate (first draw), on range-normalised columns; null when not meaningful.
    ck : number or null
        001's CK of the estimate (first draw), on range-normalised columns; null when not meaningful.
    cm : number
        001's CM of the estimate (eq. 7.1).
    cca : number
        001's CCA of the estimate (eqs. 7.9-7.10).
    knnm : number
        001's knnM of the estimate (eq. 7.12, k = 5; first draw).
    knnm_neighbours : number
        knnM as 001's Table 7.5 reports it (k = 5; first draw).
    draws : int
        Draws of the known records averaged.
    spread : object
        Standard deviations of ``min`` and ``mean`` over those draws.
    median : object
        Medians of ``min`` and ``mean`` over those draws.
    iqr : object
        Interquartile ranges of ``min`` and ``mean`` over those draws.
    object_privacy_mean : number
        Multilateration: the mean privacy of a record (000 eqs. 4.20-4.21).
    distance_error : number
        PCA attack: the mean distance between a record and its recovery (000 §4.5.4).
    md_eigenvalues : number
        PCA attack: the matching distance of the sample's and the sent block's eigenvalues, as shares of their
        sum (000 eq. 4.25).
    md_eigenvectors : number
        PCA attack: the matching distance of their eigenvectors, in radians (000 eq. 4.26).
    ks_pvalue : number
        PCA attack: the smallest two-sample KS p-value of the recovered columns against the sample's.
    search : str
        PCA attack: how the eigenvectors' mirror images were picked.
    records : int
        Secure aggregation: the records attacked.
    weighted : object
        Naive inference, when the party's method weighs its columns (002 §6.1): ``min`` (Phi1, min_i p_i / w_i)
        and ``mean`` (Phi2), the weights scaled to a mean of 1.
    """

    OPEN = True
    knowledge: str | Absent = ABSENT
    estimator: str | Absent = ABSENT
    columns: dict[str, float]
    min: float
    mean: float
    privacy_002: Privacy002 | Absent = ABSENT
    vd: float | Absent = ABSENT
    rp: float | Absent = ABSENT
    rm: float | Absent = ABSENT
    cp: float | None | Absent = ABSENT
    ck: float | None | Absent = ABSENT
    cm: float | Absent = ABSENT
    cca: float | Absent = ABSENT
    knnm: float | Absent = ABSENT
    knnm_neighbours: float | Absent = ABSENT
    draws: int | Absent = ABSENT
    spread: dict[str, float] | Absent = ABSENT
    median: dict[str, float] | Absent = ABSENT
    iqr: dict[str, float] | Absent = ABSENT
    object_privacy_mean: float | Absent = ABSENT
    distance_error: float | Absent = ABSENT
    md_eigenvalues: float | Absent = ABSENT
    md_eigenvectors: float | Absent = ABSENT
    ks_pvalue: float | Absent = ABSENT
    search: str | Absent = ABSENT
    records: int | Absent = ABSENT
    weighted: dict[str, float] | Absent = ABSENT
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class PartyPrivacy(Section):
    """The attacks on one party's sent arrays, measured by the observer.

    Attributes
    ----------
    method : str
        The party's disguise.
    records : int
        Records attacked (a seeded sample on large data).
    seed : int
        The scenario's seed.
    sent_distortion : Distortion
        001's distortion of what the party sent: every measure when it has the original's shape, else CCA and knnM.
    attacks : object
        Per attack name, its AttackScore or why it was Skipped.
    """

    OPEN = True
    method: str
    records: int
    seed: int
    sent_distortion: Distortion | Absent = ABSENT
    attacks: dict[str, AttackScore | Skipped]
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(kw_only=True)
class Placement(Section):
    """The arbiter's own attack on what it saw (ppcsim.evaluate.arbiter): classical scaling of the anchors from
    round 0's centre-to-centre sums, multilateration of every joined record.

    Attributes
    ----------
    attack : str
        The attack, in words.
    relative_error : number or null
        Relative error of the placed joined records after the best rotation and translation (0: placed exactly;
        1: nothing placed); null when there was nothing to run it on.
    records : int
        Joined records placed (0 when not run).
    dims : int
        Dimensions the anchors span (at most k - 1), beside the joined columns.
    skipped : str
        Why it was not run (absent when it was).
    """

    attack: str
    relative_error: float | None
    records: int
    dims: int
    skipped: str | Absent = ABSENT


@dataclass(kw_only=True)
class Arbiter(Section):
    """What the arbiter of secure aggregation sees and never sees, in words.

    Attributes
    ----------
    sees : array of str
        What it sees.
    never_sees : array of str
        What it never sees.
    placement : Placement
        Secure aggregation's arbiter (the coordinator): how well it could place the joined records from what it
        saw, measured by running its own attack.
    """

    sees: list[str]
    never_sees: list[str]
    placement: Placement | Absent = ABSENT


@dataclass(kw_only=True)
class Post(Section):
    """One party's last-round post against its true partial distances.

    Attributes
    ----------
    correlation_with_partial_distances : number
        Pearson correlation (0: the post tells nothing).
    uniformity_ks_pvalue : number
        Kolmogorov-Smirnov p-value of the posts against the uniform distribution.
    values : int
        Values compared.
    """

    correlation_with_partial_distances: float
    uniformity_ks_pvalue: float
    values: int


@dataclass(kw_only=True)
class Posts(Section):
    """The parties' posts as the arbiter received them.

    Attributes
    ----------
    what : str
        What was compared, in words.
    by_party : object
        Per party, its Post.
    """

    what: str
    by_party: dict[str, Post]


@dataclass(kw_only=True)
class SecurePrivacy(Section):
    """Privacy of a secure-aggregation run, measured by the observer.

    Attributes
    ----------
    arbiter : Arbiter
        What the arbiter sees.
    posts : Posts
        The posts against the truth (when the session converged).
    multilateration : object
        Multilateration of the joined records from the initial centres: an AttackScore, or why it was Skipped.
    """

    arbiter: Arbiter
    posts: Posts | Absent = ABSENT
    multilateration: AttackScore | Skipped


@dataclass(kw_only=True)
class MpcPrivacy(Section):
    """Privacy of an MPC run: what each role learned, in words, and the assumption it rests on.

    Attributes
    ----------
    assumption : str
        The trust assumption (honest majority: no t + 1 share-holders collude).
    roles : object
        Per role (``coordinator``, ``each party``, ``helper``), an Arbiter of what it sees and never sees.
    """

    assumption: str
    roles: dict[str, Arbiter]


@dataclass(kw_only=True)
class Evaluation(Section):
    """What the observer measured of a run: its utility and its privacy (the two sections of the report).

    Attributes
    ----------
    utility : Utility
        Utility.
    privacy : object
        Privacy (see Report).
    """

    utility: Utility
    privacy: Privacy


#: The privacy section: per party (upload sessions), the arbiter's view (secure aggregation), or skipped.
Privacy = Skipped | SecurePrivacy | MpcPrivacy | dict[str, PartyPrivacy]
