"""Exact pricing for mutual information column generation (see :mod:`mechdesign.engines.sublinear`).

On a ray family of the min_mass/simplex cone (two-level rays r = m + (1 − m)1_A, or
r = 1_A + w e_j) the reduced value (μ(r) − λ·r)/(1·r) of mutual information is

    F(A)/norm,  F(A) = C + D·U − h(α + γ·U) − β·V,   U = P(A),  V = λ(A),  h(s) = s log s,

concave in U and linear in V, maximised over sets A of a fixed size: a concave-over-subsets
problem (subset sum when λ ∝ P), solved by branch and bound (:func:`price_family`) whose node
bound is the Lagrangian relaxation of U = P(A) (:func:`node_bound`), exact over the convex hull
of the node, and whose nodes are shrunk by reduced-cost fixing at the best slope
(:func:`reduced_cost_fixing`: an item whose forced exclusion or inclusion alone costs more than
the bound's margin over the incumbent is fixed; about 5× fewer nodes at N = 50).
"""

from __future__ import annotations

import math
import time

import numpy as np

from mechdesign.objectives.pricing_mi_slopes import FamilyArrays, root_pass, swap_pass
from mechdesign.privacy.ray_families import family_rays, indicator

__all__ = [
    "MIPricer",
    "MIFamily",
    "node_bound",
    "price_family",
    "reduced_cost_fixing",
    "PRICE_NODE_LIMIT",
    "PRICE_SHARE",
    "PRICE_KEEP",
    "PRICE_RAYS_PER_ROUND",
]

PRICE_NODE_LIMIT = 3000
"""Branch-and-bound nodes per ray family and pricing round; past it the relaxation bound of the open nodes is used
(a round that finds no ray but leaves families open retries them once with 10× the limit)."""
PRICE_SHARE = 0.5
"""A family is searched only for rays whose reduced value exceeds this share of the best found in the round."""
PRICE_KEEP = 10
"""Rays returned per family and round at most (the best sets met above the cut); see :data:`PRICE_RAYS_PER_ROUND`."""
PRICE_RAYS_PER_ROUND = 1730
"""Rays per round over all families: each family returns max(2, min(PRICE_KEEP, this // families)), 10 at N = 100
(173 families at ε = 1, c = 1/(2N)), 4 at N = 200 (347). Measured with the affine dual start, back to back: N = 50
3.7 s with 10, 5.5 s with 4; N = 100 17 s with 10, 22 s with 4; N = 200 relative gap after 60 s 7e-4–9e-4 with 4,
1.2e-3 with 2 or 5, 3e-3 with 10 (the LP of each round is smaller)."""
QUICK_ENOUGH = 1.0
"""The quick pass (every family's root relaxation, :func:`mechdesign.objectives.pricing_mi_slopes.root_pass`)
ends the round when it finds at least this many times N rays not yet known; otherwise the branch and bound runs."""
SHORT_NODES = 200
"""Node limit of the families searched after the round has found rays to return."""
PRICE_ROUND_SECONDS = 10.0
"""Search time of one pricing round; past it the open nodes' bounds are used (valid, looser)."""


class MIFamily:
    """One ray family as a subset problem: over sets A of the free items with |A| = k, maximise

        F(A) = C + D·U − h(α + γ·U) − β·V,   U = P(A),  V = λ(A),  h(s) = s log s,

    concave in U and linear in V; the reduced value (μ(r) − λ·r)/(1·r) of the ray is F(A)/norm.

    * 'two'  (r = m + (1 − m)1_A, |A| = q):  C = m log m − mΣλ, D = −m log m, α = m, γ = β = 1 − m,
      norm = q + (N − q)m;
    * 'zero' (r = 1_A + w e_j, j ∉ A):       C = P_j w log w − wλ_j, D = 0, α = wP_j, γ = β = 1,
      norm = |A| + w (items: all x ≠ j).
    """

    def __init__(self, P, lam, kind, size, level, j=None):
        n = len(P)
        self.kind, self.size, self.level, self.j = kind, size, level, j
        self.free = np.arange(n) if j is None else np.delete(np.arange(n), j)
        self.u, self.v = P[self.free], lam[self.free]
        self.k = size
        if kind == "two":
            m = level
            mlogm = m * math.log(m) if m > 0 else 0.0
            self.C, self.D, self.alpha, self.gamma, self.beta = mlogm - m * float(lam.sum()), -mlogm, m, 1 - m, 1 - m
            self.norm = size + (n - size) * m
        else:
            w = level
            self.C = (P[j] * w * math.log(w) if w > 0 else 0.0) - w * float(lam[j])
            self.D, self.alpha, self.gamma, self.beta = 0.0, w * float(P[j]), 1.0, 1.0
            self.norm = size + w

    def value(self, U, V):
        s = self.alpha + self.gamma * U
        h = s * math.log(s) if s > 0 else 0.0
        return self.C + self.D * U - h - self.beta * V

    def s_root(self, X):
        """The slope s whose tangent problem sup_X' [φ(X') − βsX'] is solved at X' = X."""
        sh = max(self.alpha + self.gamma * X, 1e-300)
        return (self.D - self.gamma * (math.log(sh) + 1.0)) / self.beta

    def x_star(self, s):
        """The maximiser of φ(X) − βsX, φ(X) = C + D·X − h(α + γX)."""
        t = (self.D - self.beta * s) / self.gamma - 1.0
        return (math.exp(min(t, 700.0)) - self.alpha) / self.gamma

    def conj(self, s, U0):
        """sup over X of φ(X) − βs(X − U0) (+∞ on overflow: still a valid upper bound)."""
        t = (self.D - self.beta * s) / self.gamma - 1.0
        if t > 700:
            return math.inf
        sh = math.exp(t)
        X = (sh - self.alpha) / self.gamma
        return self.C + (self.D - self.beta * s) * X - sh * t + self.beta * s * U0


def _fixed_node_bound(fam: MIFamily, u, v, k, U0, V0, found):
    """:func:`node_bound`'s answer when the node leaves no choice: no set of the family's size (k < 0 or
    k > the free items) or a single set (k = 0 or all of them); None when the node has a choice."""
    nf = len(u)
    if k < 0 or k > nf:  # no set of the node has the family's size
        return -math.inf, None, 0.0, True, None
    if k == 0 or k == nf:
        mask = np.full(nf, k >= nf)
        val = fam.value(U0 + float(u[mask].sum()), V0 + float(v[mask].sum()))
        found(mask, val)
        return val, None, 0.0, True, None
    return None


class _NodeLagrangian:
    """The Lagrangian bound L(s) of one node of :func:`node_bound` (items with sums U0, V0 fixed in, k more
    to choose from (u, v)), its top-k sets, and the smallest L met with its slope."""

    __slots__ = ("fam", "u", "v", "k", "U0", "V0", "found", "nf", "beta", "base", "value", "slope")

    def __init__(self, fam: MIFamily, u, v, k, U0, V0, found):
        self.fam, self.u, self.v, self.k, self.U0, self.V0, self.found = fam, u, v, k, U0, V0, found
        self.nf = len(u)
        self.beta = fam.beta
        self.base = -fam.beta * V0
        self.value, self.slope = math.inf, None

    def topk(self, s):
        """(mask, U, V, top-k sum, mask bytes) of the k items of largest s·u − v; the set is passed to
        ``found`` (mask bytes are compared instead of np.array_equal, 10× cheaper)."""
        u, v, nf, k = self.u, self.v, self.nf, self.k
        sc = s * u - v
        idx = np.argpartition(sc, nf - k)[nf - k :]
        mask = np.zeros(nf, bool)
        mask[idx] = True
        Us, Vs = float(_add(u[idx])), float(_add(v[idx]))  # np.add.reduce = ndarray.sum bit for bit, without its
        self.found(mask, self.fam.value(self.U0 + Us, self.V0 + Vs))  # Python wrappers (~1M calls a run at N = 100)
        return mask, Us, Vs, float(_add(sc[idx])), mask.tobytes()

    def bound_at(self, s, top):
        """Record L(s) from the top-k sum ``top`` at s; the smallest L met so far."""
        val = self.fam.conj(s, self.U0) + self.base + self.beta * top
        if val < self.value:
            self.value, self.slope = val, s
        return self.value

    def bracket(self, s_hint):
        """(s_a, s_b, A, B): slopes with L'(s_a) ≤ 0 ≤ L'(s_b) and their top-k sets; the parent's best slope
        ``s_hint`` replaces one end when it lies inside."""
        fam, U0, k = self.fam, self.U0, self.k
        us = np.sort(self.u)
        s_a = fam.s_root(U0 + float(us[-k:].sum()))  # X*(s_a) − U0 = max U: L'(s_a) ≤ 0
        s_b = fam.s_root(U0 + float(us[:k].sum()))  # X*(s_b) − U0 = min U: L'(s_b) ≥ 0
        if s_hint is not None and s_a < s_hint < s_b:
            H = self.topk(s_hint)
            self.bound_at(s_hint, H[3])
            if H[1] >= fam.x_star(s_hint) - U0:  # L'(s_hint) ≥ 0
                A, B, s_b = self.topk(s_a), H, s_hint
            else:
                A, B, s_a = H, self.topk(s_b), s_hint
        else:
            A, B = self.topk(s_a), self.topk(s_b)
        self.bound_at(s_a, A[3])
        self.bound_at(s_b, B[3])
        return s_a, s_b, A, B

    def newton_step(self, S, s_a, s_b):
        """(t, top-k set at t) for the root t of L' if the set stayed S, when s_a < t < s_b; else None."""
        t = self.fam.s_root(self.U0 + S[1])
        if not (s_a < t < s_b):
            return None
        C = self.topk(t)
        self.bound_at(t, C[3])
        return t, C

    def swap_breakpoint(self, A, B, s_a, s_b):
        """When A and B differ by one swap (i ∈ B∖A, jj ∈ A∖B) whose breakpoint slope lies in [s_a, s_b]:
        L there, and (i, relaxed weight of i) if L' changes sign at it (a fractional optimum), else ()
        (the root is inside A's or B's piece); None when there is no such breakpoint."""
        u, v = self.u, self.v
        diff = np.nonzero(A[0] != B[0])[0]
        if len(diff) != 2:
            return None
        i, jj = (diff[0], diff[1]) if B[0][diff[0]] else (diff[1], diff[0])  # i ∈ B∖A, jj ∈ A∖B
        if not (u[i] != u[jj]):
            return None
        s_x = float((v[i] - v[jj]) / (u[i] - u[jj]))
        if not (s_a <= s_x <= s_b):
            return None
        C = self.topk(s_x)
        top = max(C[3], s_x * A[1] - A[2], s_x * B[1] - B[2])
        self.bound_at(s_x, top)
        X = self.fam.x_star(s_x) - self.U0
        if A[1] <= X <= B[1]:  # L' changes sign at the breakpoint: fractional optimum
            return int(i), (X - A[1]) / (B[1] - A[1])
        return ()


def node_bound(fam: MIFamily, u, v, k, U0, V0, found, s_hint=None):
    """Upper bound of F over a node: items with sums U0, V0 fixed in, choose k more of (u, v).

    Lagrangian relaxation of U = u·t: for EVERY slope s,
        F ≤ L(s) = sup_X[φ(X) − βs(X − U0)] − βV0 + β·(sum of the k largest s·u_x − v_x),
    and min_s L(s) is the maximum of F over the convex hull of the node (|A| = k relaxed to
    t ∈ [0,1], Σt = k). The returned bound is the smallest L evaluated, so it is valid whatever the
    search does; s is driven to the minimiser by Newton steps from both ends of a bracket
    [s_a, s_b] (L' ≤ 0 at s_a, ≥ 0 at s_b) and by the breakpoint of the last single swap.

    Returns (ub, branch, theta, integral): ``integral`` when the relaxed optimum is a set (then
    ub is its value up to rounding); otherwise ``branch`` is an item (index into u) that splits the
    hull edge containing it and theta its relaxed weight. Each top-k set met is passed to
    ``found(mask, F value)``.
    """
    fixed = _fixed_node_bound(fam, u, v, k, U0, V0, found)
    if fixed is not None:
        return fixed
    node = _NodeLagrangian(fam, u, v, k, U0, V0, found)
    s_a, s_b, A, B = node.bracket(s_hint)
    for _ in range(80):
        if A[4] == B[4]:
            s = fam.s_root(U0 + A[1])
            node.bound_at(s, node.topk(s)[3])
            return node.value, None, 0.0, True, node.slope
        moved = False
        step = node.newton_step(A, s_a, s_b)  # the root of L' if the set stayed A (s* ≤ it)
        if step is not None:
            if step[1][4] == A[4]:
                return node.value, None, 0.0, True, node.slope
            (s_b, B), moved = step, True
        step = node.newton_step(B, s_a, s_b)  # s* ≥ the root of L' if the set stayed B
        if step is not None:
            if step[1][4] == B[4]:
                return node.value, None, 0.0, True, node.slope
            (s_a, A), moved = step, True
        if A[4] == B[4]:
            continue
        swap = node.swap_breakpoint(A, B, s_a, s_b)
        if swap:
            return node.value, swap[0], swap[1], False, node.slope
        if swap is not None:
            continue  # the root is inside A's or B's piece: the Newton steps find it next
        if not moved:
            s = 0.5 * (s_a + s_b)
            if not (s_a < s < s_b):
                break
            C = node.topk(s)
            node.bound_at(s, C[3])
            if C[1] >= fam.x_star(s) - U0:
                s_b, B = s, C
            else:
                s_a, A = s, C
    diff = np.flatnonzero(A[0] != B[0])
    if len(diff) == 0:
        return node.value, None, 0.0, True, node.slope
    i = next((int(d) for d in diff if B[0][d]), int(diff[0]))
    return node.value, i, 0.5, False, node.slope


FIXING = True
_add = np.add.reduce


def reduced_cost_fixing(fam: MIFamily, idx, k, U0, V0, s, target):
    """Items of the node (positions in idx) that every set of value > target must contain (fin) or
    avoid (fout), by the Lagrangian bound at slope s: forcing an item x of the top-k set T out costs
    at least β(sc_x − sc_(k+1)), forcing x ∉ T in costs β(sc_(k) − sc_x) (sc = s·u − v), and
    L(s) minus that cost bounds every set of the child.  Kept only with a margin over rounding."""
    u, v = fam.u[idx], fam.v[idx]
    nf = len(u)
    if not (0 < k < nf):
        return np.zeros(0, int), np.zeros(0, int)
    sc = s * u - v
    order = np.argsort(-sc, kind="stable")
    top = float(sc[order[:k]].sum())
    Ls = fam.conj(s, U0) - fam.beta * V0 + fam.beta * top
    slack = (Ls - target) / fam.beta
    if not math.isfinite(slack):
        return np.zeros(0, int), np.zeros(0, int)
    margin = 1e-12 * (1.0 + abs(Ls) / fam.beta + float(np.abs(sc).max()) * k)
    kth, next_ = sc[order[k - 1]], sc[order[k]]
    T, O = order[:k], order[k:]
    fin = T[sc[T] - next_ > slack + margin]
    fout = O[kth - sc[O] > slack + margin]
    return fin, fout


def price_family(fam: MIFamily, prune: float, node_limit: int, keep: int = 3, deadline: float = math.inf):
    """Branch and bound for max_A F(A)/norm over the family (exact up to rounding).

    Nodes fix items in or out; the bound of a node is :func:`node_bound`; branching is on an item
    of the hull edge holding the relaxed optimum, depth first toward the larger relaxed weight;
    nodes with bound ≤ max(prune, incumbent) are cut. Returns (sets, values, certified, root, nodes):
    up to ``keep`` best sets (index arrays) with value > prune, and ``certified`` ≥ max_A F(A)/norm,
    namely max(incumbent, prune, bounds of nodes found integral) when the search finishes, else
    also the bounds of the nodes left open (the relaxation bound at worst).
    """
    norm = fam.norm
    prune_f = prune * norm
    best = {"val": -math.inf}
    pool: dict = {}
    ctx = {"idx": None, "fixed": None}

    def found(mask, val):
        if val > best["val"]:
            best["val"] = val
        if val > prune_f:
            key = tuple(sorted(ctx["fixed"] + fam.free[ctx["idx"][mask]].tolist()))
            if key not in pool:
                pool[key] = val
                if len(pool) > 4 * keep:
                    for kk in sorted(pool, key=pool.get)[: len(pool) - 2 * keep]:
                        del pool[kk]

    nf = len(fam.u)
    group = getattr(fam, "group", None)  # classes of equal (P_x, λ_x) over the free items
    if group is None:
        group = np.unique(np.column_stack([fam.u, fam.v]), axis=0, return_inverse=True)[1].ravel()
    stack = [(math.inf, np.arange(nf), fam.k, 0.0, 0.0, [], None)]  # (…, the parent's best slope)
    cert = -math.inf
    nodes = 0
    root = None
    while stack:
        parent_ub, idx, k, U0, V0, fixed, hint = stack.pop()
        if root is not None and parent_ub <= max(prune_f, best["val"]):
            continue
        if root is not None and (nodes >= node_limit or (nodes % 16 == 0 and time.perf_counter() > deadline)):
            stack.append((parent_ub, idx, k, U0, V0, fixed, hint))
            cert = max(cert, max(s[0] for s in stack))
            break
        nodes += 1
        ctx["idx"], ctx["fixed"] = idx, fixed
        ub, br, theta, integral, s_best = node_bound(fam, fam.u[idx], fam.v[idx], k, U0, V0, found, hint)
        if root is None:
            root = ub
        if ub <= max(prune_f, best["val"]):
            continue
        if integral or br is None:
            cert = max(cert, ub)
            continue
        if FIXING and s_best is not None:
            fin, fout = reduced_cost_fixing(fam, idx, k, U0, V0, s_best, max(prune_f, best["val"]))
            if len(fin) or len(fout):
                keep_ = np.ones(len(idx), bool)
                keep_[fin] = False
                keep_[fout] = False
                items_in = idx[fin]
                stack.append(
                    (
                        ub,
                        idx[keep_],
                        k - len(fin),
                        U0 + float(fam.u[items_in].sum()),
                        V0 + float(fam.v[items_in].sum()),
                        fixed + [int(x) for x in fam.free[items_in]],
                        s_best,
                    )
                )
                continue
        item = int(idx[br])
        rest = np.delete(idx, br)
        child_in = (
            ub,
            rest,
            k - 1,
            U0 + float(fam.u[item]),
            V0 + float(fam.v[item]),
            fixed + [int(fam.free[item])],
            s_best,
        )
        # items with the same (P_x, λ_x) are interchangeable: "item out" drops its whole class
        child_out = (ub, rest[group[rest] != group[item]], k, U0, V0, fixed, s_best)
        if theta >= 0.5:
            stack += [child_out, child_in]
        else:
            stack += [child_in, child_out]
    certified = max(cert, best["val"], prune_f) / norm
    keys = sorted(pool, key=pool.get, reverse=True)[:keep]
    sets = [np.array(kk, int) for kk in keys]
    return sets, np.array([pool[kk] / norm for kk in keys]), certified, root / norm, nodes


class MIPricer:
    """One pricing round of mutual-information column generation over the ray families.

    A quick pass first evaluates the root Lagrangian relaxation of every family at once
    (:func:`~mechdesign.objectives.pricing_mi_slopes.root_pass`: one sort per slope serves all families)
    and, for the families whose hull-vertex sets do not improve, the sets one swap away from their best
    (:func:`~mechdesign.objectives.pricing_mi_slopes.swap_pass`): when it meets improving rays (value > floor)
    not yet in the LP, the round returns them (up to :data:`PRICE_KEEP` per family, fewer past
    :data:`PRICE_RAYS_PER_ROUND` in all), certified by each
    family's root relaxation bound. A family whose relaxation is attained by a set is finished there. Otherwise the
    families still open are searched (:data:`PRICE_NODE_LIMIT` nodes), in decreasing order of their
    bound, only for values above max(floor, PRICE_SHARE · best value found so far), which keeps the
    certificate valid (g ≤ max(best, cut, bounds of open nodes)); once some family has given rays,
    the others get only :data:`SHORT_NODES` nodes; if the pass finds no ray but leaves families
    open, they are searched once more with 10× the node limit. A round searches for at most
    :data:`PRICE_ROUND_SECONDS` (then the open nodes' bounds are used).
    """

    method = "exact pricing by branch and bound"

    def __init__(self, P: np.ndarray, fams):
        self.P, self.fams, self.n = P, fams, len(P)

    def price(self, lam: np.ndarray, floor: float, out_of_time: bool, known: set | None = None):
        """(new rays as a list of arrays, certified g, note).

        ``known`` holds the bytes of the rays already in the LP: they cannot improve it (their reduced
        value is within the LP's dual feasibility tolerance, which can exceed the floor), so the quick pass
        returns early only on a ray not in it; otherwise the full search runs and certifies g.
        """
        deadline = time.perf_counter() + PRICE_ROUND_SECONDS
        items = self._families(lam)
        keep = max(2, min(PRICE_KEEP, PRICE_RAYS_PER_ROUND // len(items)))
        certs, done, quick = self._quick_pass(items, lam, floor, keep)
        unknown = _count_unknown(quick, known)
        if out_of_time or unknown >= QUICK_ENOUGH * self.n:
            return quick, max(certs), ""
        new, g_cert, left = self._search(items, certs, done, floor, keep, unknown, known, deadline)
        note = f"node limit hit in {len(left)} families (relaxation bound used there)" if left else ""
        return quick + new, g_cert, note

    def _families(self, lam: np.ndarray) -> list[MIFamily]:
        """Every ray family as a subset problem at the duals ``lam``, with the classes of equal (P_x, λ_x)."""
        items = [
            MIFamily(self.P, lam, kind, size, level, j)
            for kind, size, level in self.fams
            for j in ([None] if kind == "two" else range(self.n))
        ]
        classes = np.unique(np.column_stack([self.P, lam]), axis=0, return_inverse=True)[1].ravel()
        for fam in items:  # equal (P_x, λ_x) classes, found once for all families
            fam.group = classes[fam.free]
        return items

    def _quick_pass(self, items: list[MIFamily], lam: np.ndarray, floor: float, keep: int):
        """Every family's root relaxation at once and its hull-vertex sets (or the sets one swap away):
        (root bounds per family, which families the root finishes, the rays of the sets found)."""
        n = self.n
        fa = FamilyArrays(items, n)
        bound, best_root, root_sets, best_sets = root_pass(fa, self.P, lam, floor * fa.norm, keep)
        # families whose hull vertices do not improve: the sets one swap away from their best set
        # (only where the root bound leaves room above the floor)
        which = [not S and b > floor * nm for S, b, nm in zip(root_sets, bound, fa.norm)]
        swaps = swap_pass(fa, self.P, lam, best_sets, floor * fa.norm, keep, which)
        root_sets = [a if len(a) else b for a, b in zip(root_sets, swaps)]
        certs = (bound / fa.norm).tolist()
        # a family whose root relaxation is attained by a set is finished: its bound is exact
        done = (bound <= best_root + 1e-12 * (1.0 + np.abs(best_root))).tolist()
        quick = [family_rays(indicator(S, n), fam.kind, fam.level, fam.j) for fam, S in zip(items, root_sets) if len(S)]
        return certs, done, quick

    def _search(self, items, certs: list, done: list, floor: float, keep: int, unknown: int, known, deadline: float):
        """Branch and bound over the families the quick pass left open, in decreasing order of their bound
        (a second pass with 10× the node limit when the first finds no ray but leaves families open):
        (new ray batches, certified g, families left open)."""
        g_cert = max((c for c, d in zip(certs, done) if d), default=-math.inf)  # families already finished
        todo = [f for f in np.argsort(certs)[::-1] if not done[f]]
        new, g_best, limit = [], -math.inf, PRICE_NODE_LIMIT
        for _attempt in range(2):
            left, open_bounds = [], []
            for f in todo:
                fam = items[f]
                cut = max(floor, PRICE_SHARE * g_best)
                if certs[f] <= cut:
                    g_cert = max(g_cert, certs[f])
                    continue
                # once the round has rays to return, the other families get a short search (still certified)
                sets, vals, cert, root, nodes = price_family(
                    fam, cut, min(limit, SHORT_NODES) if new or unknown else limit, keep, deadline
                )
                best = float(vals.max()) if len(vals) else -math.inf
                certs[f] = min(certs[f], cert)
                if len(vals):
                    g_best = max(g_best, best)
                    new.append(family_rays(indicator(sets, self.n), fam.kind, fam.level, fam.j))
                if cert > max(cut, best) * (1 + 1e-12) + 1e-15:  # open nodes left: bound from the relaxation
                    left.append(f)
                    open_bounds.append(certs[f])
                else:
                    g_cert = max(g_cert, certs[f])
            if unknown or _has_unknown(new, known) or not left or time.perf_counter() > deadline:
                break
            todo, limit = left, 10 * limit
        return new, max([g_cert] + open_bounds), left


def _count_unknown(batches, known: set | None) -> int:
    """How many rays of the batches are not among ``known`` (bytes of the rays already in the LP)."""
    return sum(known is None or r.tobytes() not in known for R in batches for r in R)


def _has_unknown(batches, known: set | None) -> bool:
    """Whether some ray of the batches is not among ``known`` (bytes of the rays already in the LP)."""
    return any(known is None or r.tobytes() not in known for R in batches for r in R)
