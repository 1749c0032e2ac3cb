"""``mechdesign epsilon --prior-set P --alphabet N (--protect-min-entropy h | --no-disclosure | --no-singling-out) [--json]``.

Chooses ε from a privacy requirement, by the disclosure paper (Saeidian et al., *Rethinking Disclosure
Prevention with PML*, §3.3): the largest ε for which an (ε, 𝒫)-PML mechanism is guaranteed to meet the
requirement, whichever prior of 𝒫 is the true one, and the theorem that justifies it
(:func:`mechdesign.theory.disclosure.epsilon_for_requirement`):

* ``--protect-min-entropy h`` (nats): no attribute U of X with H∞(P_U) > h is disclosed (Theorem 4;
  below log 1/(1 − min mass) nothing at all is disclosed, Proposition 7 + Theorem 6);
* ``--no-disclosure``: no attribute at all (ε < −log(1 − min_{P∈𝒫} min_x P(x)));
* ``--no-singling-out``: X is never singled out (ε < min_{P∈𝒫} H∞(P), Corollary 8).

"strict" in the answer means the guarantee holds for every ε below the value, not at it. Exit 0; 1 when
no ε ≥ 0 is guaranteed by the theorems (a strict bound of 0, e.g. --no-singling-out over all priors); 2 on
bad input.

The spec form ``epsilon: {protect: {min_entropy: H | no_disclosure: true | no_singling_out: true}}`` takes the
same requirements (one meaning each); ``spec_epsilon`` in the answer is the exact ε such a spec enforces
(:mod:`mechdesign.theory.epsilon_requirement`: h itself, or the largest 16-digit decimal provably below a
strict threshold). An h at or above −log(min_{P∈𝒫} min_x P(x)) protects nothing and is refused (exit 2).
"""

from __future__ import annotations

import json
import math
import sys

from mechdesign.spec.errors import InputError

__all__ = ["register", "run_epsilon"]


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "epsilon",
        help="the largest eps that guarantees a disclosure requirement (disclosure paper)",
        description="Largest eps such that every (eps, P)-PML mechanism meets the requirement, "
        "with the theorem that justifies it.",
    )
    p.add_argument("--prior-set", help="simplex, min_mass:C, point:P1,P2,... or a mapping '{kind: box, ...}'")
    p.add_argument(
        "spec",
        nargs="?",
        help="with --rmse or --max-sd: a frequency_estimation spec whose eps is chosen from the accuracy asked",
    )
    p.add_argument("--rmse", type=float, help="target sqrt(E||p_hat - P||^2) of the MLE from --n reports")
    p.add_argument("--max-sd", type=float, help="target max_x sd(p_hat_x) of the MLE from --n reports")
    p.add_argument("--n", type=int, help="the number of reports (with --rmse or --max-sd)")
    p.add_argument("--width", type=float, default=1e-6, help="width of the certified eps bracket (default 1e-6)")
    p.add_argument("--alphabet", type=int, help="N, the number of secrets (needed unless the prior set fixes it)")
    p.add_argument(
        "--protect-min-entropy",
        metavar="H",
        help="protect every attribute with min-entropy H_inf(P_U) > H (nats; number or expression)",
    )
    p.add_argument("--no-disclosure", action="store_true", help="no attribute of X may be disclosed")
    p.add_argument("--no-singling-out", action="store_true", help="the value of X may never be singled out")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=_cmd_epsilon)


def _alphabet(prior_set, given: int | None) -> int:
    for field in ("prior", "center"):
        v = getattr(prior_set, field, None)
        if v is not None:
            return len(v)
    for field in ("priors",):
        v = getattr(prior_set, field, None)
        if v:
            return len(v[0])
    for field in ("lower",):
        v = getattr(prior_set, field, None)
        if v is not None:
            return len(v)
    if given is None:
        raise InputError("--alphabet: required for this prior set (the number of secrets N)")
    return given


def run_epsilon(
    prior_set_text: str, alphabet: int | None, protect: str | None, no_disclosure: bool, no_singling_out: bool
) -> dict:
    from mechdesign.cli.args import parse_epsilon, parse_prior_set
    from mechdesign.theory.disclosure import epsilon_for_requirement

    if alphabet is not None and alphabet < 2:
        raise InputError(f"--alphabet: must be >= 2, found {alphabet}")
    ps = parse_prior_set(prior_set_text)
    n = _alphabet(ps, alphabet)
    if alphabet is not None and alphabet != n:
        raise InputError(f"--alphabet: {alphabet} does not match the prior set's {n} symbols")
    ps = parse_prior_set(prior_set_text, n)
    h = None
    if protect is not None:
        try:
            h = parse_epsilon(protect).value
        except InputError as exc:
            raise InputError(str(exc).replace("--epsilon", "--protect-min-entropy")) from None
    if h is None and not no_disclosure and not no_singling_out:
        raise InputError("epsilon: give a requirement: --protect-min-entropy H, --no-disclosure or --no-singling-out")
    choice = epsilon_for_requirement(
        ps, n, protect_min_entropy=h, no_disclosure=no_disclosure, no_singling_out=no_singling_out
    )
    spec_eps = _spec_epsilon(ps, n, protect, no_disclosure, no_singling_out)
    return {"alphabet": n, "prior_set": ps.model_dump(mode="json"), **choice.to_json(), "spec_epsilon": spec_eps}


def _spec_epsilon(ps, n: int, protect: str | None, no_disclosure: bool, no_singling_out: bool) -> str | None:
    """The exact ε a spec ``epsilon: {protect: ...}`` with these requirements enforces (None when no ε > 0 does)."""
    from mechdesign.spec.errors import SpecError
    from mechdesign.spec.models import ProtectRequirement
    from mechdesign.theory.epsilon_requirement import resolve_requirement

    req = ProtectRequirement(min_entropy=protect, no_disclosure=no_disclosure, no_singling_out=no_singling_out)
    try:
        return resolve_requirement(req, ps, n).epsilon_text
    except SpecError as exc:
        field, rule = exc.pairs[0]
        if field.endswith("min_entropy"):
            raise InputError(f"--protect-min-entropy: {rule}") from None
        return None  # a zero threshold: reported below as 'no eps >= 0 meets this bound' (exit 1)


def run_accuracy(spec_path: str, rmse: float | None, max_sd: float | None, n: int | None, width: float) -> dict:
    """The certified bracket [eps_lo, eps_hi] of the smallest eps whose optimal frequency-estimation design meets
    the accuracy (:mod:`mechdesign.engines.accuracy_epsilon`)."""
    from pathlib import Path

    import yaml

    from mechdesign.engines.accuracy_epsilon import resolve_accuracy
    from mechdesign.spec.models import load_spec

    if (rmse is None) == (max_sd is None):
        raise InputError("epsilon: give exactly one of --rmse R or --max-sd S")
    if n is None or n < 1:
        raise InputError("--n: the number of reports (>= 1) is required with --rmse or --max-sd")
    if not spec_path:
        raise InputError("epsilon: --rmse/--max-sd need a SPEC file (a frequency_estimation objective)")
    path = Path(spec_path)
    if not path.is_file():
        raise InputError(f"SPEC: no such file {spec_path}")
    data = yaml.safe_load(path.read_text())
    if not isinstance(data, dict):
        raise InputError("SPEC: must be a mapping")
    target = {"n": n, "width": width, **({"rmse": rmse} if rmse is not None else {"max_sd": max_sd})}
    data["epsilon"] = {"accuracy": target}
    spec = load_spec(data)
    _, res = resolve_accuracy(spec)
    return res.to_json()


def _cmd_epsilon(args) -> int:
    if args.rmse is not None or args.max_sd is not None:
        out = run_accuracy(args.spec, args.rmse, args.max_sd, args.n, args.width)
        if args.json:
            sys.stdout.write(json.dumps(out, indent=2) + "\n")
        else:
            sys.stdout.write(
                f"eps in [{out['epsilon_low']:.12g}, {out['epsilon_text']}] nats (certified bracket)\n"
                f"  {out['explanation']}\n"
            )
        return 0
    if args.prior_set is None:
        raise InputError("--prior-set: required (or --rmse/--max-sd with a SPEC)")
    out = run_epsilon(args.prior_set, args.alphabet, args.protect_min_entropy, args.no_disclosure, args.no_singling_out)
    if args.json:
        out = {k: (v if not (isinstance(v, float) and math.isinf(v)) else "inf") for k, v in out.items()}
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
    else:
        rel = "<" if out["strict"] else "<="
        sys.stdout.write(f"eps {rel} {out['epsilon']:.12g} nats  ({out['theorem']})\n  {out['explanation']}\n")
        if out["spec_epsilon"] is not None:
            sys.stdout.write(f"  a spec with epsilon: {{protect: ...}} enforces eps = {out['spec_epsilon']} (exact)\n")
        if out["strict"] and out["epsilon"] <= 0:
            sys.stdout.write(
                "  no eps >= 0 meets this bound: the prior set contains a prior with a zero mass "
                "(or a point mass); restrict the prior set (e.g. min_mass:C)\n"
            )
    return 1 if out["strict"] and out["epsilon"] <= 0 else 0
