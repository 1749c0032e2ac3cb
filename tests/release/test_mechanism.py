"""The exact sampler: frequencies match the rational rows, seeds reproduce, labels are checked."""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from mechdesign import design
from mechdesign.certify.exact import ExactKernel
from mechdesign.spec.errors import InputError
from mechdesign.release.mechanism import Mechanism

F = Fraction

KRR = {
    "alphabet": ["a", "b", "c", "d"],
    "epsilon": "log(3)",
    "prior_set": {"kind": "simplex"},
    "objective": {"kind": "expected_loss", "loss": "hamming"},
}


@pytest.fixture(scope="module")
def krr():
    return Mechanism.from_result(design(KRR))


def _chi_square_p(counts: np.ndarray, probs: list[Fraction]) -> float:
    expected = np.array([float(p) for p in probs]) * counts.sum()
    keep = expected > 0
    assert counts[~keep].sum() == 0, "an output of probability 0 was drawn"
    return stats.chisquare(counts[keep], expected[keep]).pvalue


def test_frequencies_match_the_rows_and_a_one_percent_error_would_be_detected(krr):
    # k-RR at eps = log 3, N = 4: diagonal 3/6 = 1/2, off-diagonal 1/6
    n_draws = 400_000
    for i in range(len(krr.labels)):
        ys = krr.privatize_indices(np.full(n_draws, i), rng=12345 + i)
        counts = np.bincount(ys, minlength=krr.shape[1])
        row = krr.kernel.fractions()[i]
        assert _chi_square_p(counts, row) > 1e-3
        # power: the same counts against the row with 1% of the diagonal's mass moved off it
        wrong = list(row)
        j = (i + 1) % len(row)
        wrong[i] -= row[i] / 100
        wrong[j] += row[i] / 100
        assert _chi_square_p(counts, wrong) < 1e-6


def test_python_random_path_matches_the_rows_too():
    K = ExactKernel.from_fractions([[F(1, 3), F(1, 3), F(1, 3)], [F(1, 10), F(7, 10), F(2, 10)]])
    mech = Mechanism.from_kernel(K)
    ys = mech.privatize_indices(np.ones(60_000, dtype=int), rng=random.Random(5))
    assert _chi_square_p(np.bincount(ys, minlength=3), K.fractions()[1]) > 1e-3


def test_one_seed_gives_identical_outputs(krr):
    data = ["a", "b", "c", "d"] * 500
    assert krr.privatize(data, rng=42) == krr.privatize(data, rng=42)
    assert krr.privatize(data, rng=42) != krr.privatize(data, rng=43)
    assert krr.privatize(data, rng=random.Random(7)) == krr.privatize(data, rng=random.Random(7))
    g1, g2 = np.random.default_rng(9), np.random.default_rng(9)
    assert [krr.sample("b", g1) for _ in range(50)] == [krr.sample("b", g2) for _ in range(50)]


def test_default_source_is_cryptographic_and_valid(krr):
    out = krr.privatize(["a"] * 200)
    assert set(out) <= set(krr.output_labels)
    assert krr.sample("c") in krr.output_labels


def test_outputs_of_an_expected_loss_design_carry_the_labels(krr):
    assert krr.output_labels == ("a", "b", "c", "d")
    arr = np.array([["a", "b"], ["c", "d"]])
    out = krr.privatize(arr, rng=1)
    assert out.shape == (2, 2) and set(out.ravel()) <= {"a", "b", "c", "d"}


def test_zero_probability_outputs_are_never_drawn():
    K = ExactKernel.from_fractions([[F(0), F(1), F(0)], [F(1, 2), F(0), F(1, 2)]])
    mech = Mechanism.from_kernel(K, labels=["x", "y"])
    assert set(mech.privatize(["x"] * 2000, rng=3)) == {"y1"}  # outputs y0..y2 (spec.notation.output_labels)
    assert set(mech.privatize(["y"] * 2000, rng=3)) == {"y0", "y2"}


def test_denominators_beyond_64_bits_are_exact():
    p = F(1, 3) + F(1, 2**80)
    K = ExactKernel.from_fractions([[p, 1 - p], [F(1, 2), F(1, 2)]])
    assert K.denominator > 2**64
    mech = Mechanism.from_kernel(K)
    ys = mech.privatize_indices(np.zeros(30_000, dtype=int), rng=np.random.default_rng(2))
    assert _chi_square_p(np.bincount(ys, minlength=2), K.fractions()[0]) > 1e-3
    ys2 = mech.privatize_indices(np.zeros(30_000, dtype=int), rng=np.random.default_rng(2))
    assert (ys == ys2).all()


def test_unknown_labels_and_bad_kernels_are_errors(krr):
    with pytest.raises(InputError, match="row 2: unknown input label 'z'"):
        krr.privatize(["a", "b", "z"], rng=1)
    with pytest.raises(InputError, match="unknown input label"):
        krr.sample("q", rng=1)
    with pytest.raises(InputError, match="sums to"):
        Mechanism.from_kernel([[0.5, 0.6], [1, 0]])
    with pytest.raises(InputError, match="distinct input labels"):
        Mechanism.from_kernel([[1, 0], [0, 1]], labels=["a", "a"])


def test_from_kernel_accepts_floats_fractions_and_strings():
    mech = Mechanism.from_kernel([[0.25, 0.75], ["1/3", F(2, 3)]])
    assert mech.kernel.fractions() == [[F(1, 4), F(3, 4)], [F(1, 3), F(2, 3)]]
    mech = Mechanism.from_kernel(np.array([[0.5, 0.5], [0.125, 0.875]]))
    assert mech.kernel.fractions()[1] == [F(1, 8), F(7, 8)]


def test_cryptographic_bulk_path_is_in_range_and_fits():
    from mechdesign.release.mechanism import _urandom_below

    for d in (1, 2, 3, 10, 7 * 2**40, 2**52, 2**63):
        v = _urandom_below(d, 5000)
        assert v.min() >= 0 and v.max() < d
    K = ExactKernel.from_fractions([[F(1, 3), F(2, 3)], [F(1, 10), F(9, 10)]])
    ys = Mechanism.from_kernel(K).privatize_indices(np.ones(200_000, dtype=int))  # default: os.urandom
    # unseeded, so a threshold with a one-in-a-million false alarm rate
    assert _chi_square_p(np.bincount(ys, minlength=2), K.fractions()[1]) > 1e-6


def test_privatize_cli_refuses_a_negative_seed_and_names_a_repeated_label(tmp_path, capsys):
    from mechdesign.cli.main import main

    kernel = tmp_path / "k.csv"
    kernel.write_text("3/4,1/4\n1/4,3/4\n")
    data = tmp_path / "d.csv"
    data.write_text("id,answer\n1,0\n2,1\n")
    base = ["privatize", "--kernel", str(kernel), "--input", str(data), "--column", "answer"]
    # numpy's generators take no negative seed: this was an internal error (exit 3)
    assert main(base + ["--seed", "-5"]) == 2
    assert "--seed: must be an integer >= 0, found -5" in capsys.readouterr().err
    assert main(base + ["--labels", "a,a"]) == 2
    assert "--labels: needs 2 distinct labels (one per kernel row), found 'a' twice" in capsys.readouterr().err
    assert main(base + ["--seed", "5"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "id,answer"
