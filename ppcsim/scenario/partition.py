"""Vertical partitioning: d columns split into contiguous blocks over n parties.

One rule for ``ppc reproduce`` (004's Fig. 2) and ``ppc sweep`` (its ``parties`` key).
"""

from __future__ import annotations


def split_sizes(d: int, n: int) -> list[int]:
    """Column counts of ``n`` contiguous blocks of ``d`` columns, as even as possible.

    The first ``d % n`` blocks hold one column more, as ``numpy.array_split``
    would split them. 004 §6.2 splits the columns over 1 to 4 parties without
    saying how; this is our reading.

    Parameters
    ----------
    d : int
        Number of columns.
    n : int
        Number of parties, from 1 to ``d``.

    Returns
    -------
    list of int
        ``n`` block sizes, in column order, that sum to ``d`` and differ by at most one.

    Raises
    ------
    ValueError
        If ``n`` is not between 1 and ``d``.

    Examples
    --------
    >>> split_sizes(23, 4)
    [6, 6, 6, 5]
    """
    if not 1 <= n <= d:
        raise ValueError(f"parties must be between 1 and d = {d}, got {n}")
    return [d // n + (1 if i < d % n else 0) for i in range(n)]


def share_k(sizes: list[int], k: int) -> list[int]:
    """Share ``k`` output dimensions among parties in proportion to their column counts.

    Largest remainder (Hamilton) method: each party gets the floor of its
    quota ``k * d_j / d``, the dimensions left over go to the largest
    fractional parts, ties to the earlier party. A party left with none then
    takes one from the largest share, so every party sends something. The
    shares sum to ``k`` and ``1 <= k_j <= d_j``.

    Examples
    --------
    >>> share_k([10, 9, 9, 9], 18)
    [5, 5, 4, 4]
    """
    d = sum(sizes)
    if not len(sizes) <= k <= d:
        raise ValueError(f"k must be between the number of parties ({len(sizes)}) and d = {d}, got {k}")
    quotas = [k * s / d for s in sizes]
    shares = [int(q) for q in quotas]
    order = sorted(range(len(sizes)), key=lambda j: (shares[j] - quotas[j], j))
    for j in order[: k - sum(shares)]:
        shares[j] += 1
    for j in [j for j, share in enumerate(shares) if share == 0]:
        shares[max(range(len(shares)), key=lambda i: shares[i])] -= 1
        shares[j] = 1
    return shares
